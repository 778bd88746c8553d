// grpc.health.v1.Health on the Workload API socket, answered the way SPIRE's agent answers it
// (`spire-agent healthcheck -socketPath` and Kubernetes probes call it). Check with no service
// name asks the agent's own Workload API for an X.509 context over a fresh connection to its own
// socket, so the answer covers what a workload goes through: accept, SO_PEERCRED, the security
// header, attestation of the agent's own pid, the handler. The probe is the agent's own call, so
// the limiter lets it through (see pipeline.ts) and call metrics leave it out (handlers.ts).
//   - the fetch delivers an SVID, or is refused with PermissionDenied (no entry for the agent
//     itself, the usual case): SERVING
//   - any other outcome (attestation failed, caller check failed, no answer in time): NOT_SERVING
//   - a non-empty service name: InvalidArgument "per-service health is not supported"
// The health call itself needs no security header and is never rate limited. Watch and List are
// not served (grpc-js answers Unimplemented), as in SPIRE.
import * as grpc from '@grpc/grpc-js';
import type { sendUnaryData, ServerUnaryCall, UntypedServiceImplementation } from '@grpc/grpc-js';
import { SECURITY_HEADER, workloadProto, type X509SVIDResponse__Output } from '../proto/index.js';
import type { HealthCheckRequest, HealthCheckResponse } from '../proto/health.js';

export interface HealthDeps {
  socketPath: string;
  log?: (message: string) => void;
}

const PER_SERVICE = 'per-service health is not supported';

/** The outcome of one fetch of the agent's own X.509 context: a gRPC code and its details. */
interface ProbeResult {
  code: grpc.status;
  details: string;
}

/**
 * One FetchX509SVID on a new connection, as go-spiffe's FetchX509Context makes it: the first
 * message or the stream's error decides; the stream is then cancelled and the connection closed.
 * A message without an SVID counts as a failure (go-spiffe cannot parse it into a context).
 */
function fetchOwnX509Context(socketPath: string, call: ServerUnaryCall<unknown, unknown>): Promise<ProbeResult> {
  const Client = workloadProto().SpiffeWorkloadAPI;
  const client = new Client(`unix:${socketPath}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  const md = new grpc.Metadata();
  md.set(SECURITY_HEADER, 'true');
  // The probe lives as long as the health call: its deadline, and its cancellation.
  const deadline = call.getDeadline();
  const options: grpc.CallOptions = Number.isFinite(typeof deadline === 'number' ? deadline : deadline.getTime()) ? { deadline } : {};
  return new Promise<ProbeResult>((resolve) => {
    let settled = false;
    const stream = client.FetchX509SVID({}, md, options);
    const settle = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      call.off('cancelled', onCancelled);
      stream.cancel();
      client.close();
      resolve(r);
    };
    const onCancelled = () => settle({ code: grpc.status.CANCELLED, details: 'health check cancelled by its caller' });
    call.once('cancelled', onCancelled);
    stream.once('data', (m: X509SVIDResponse__Output) =>
      settle(m.svids.length > 0 ? { code: grpc.status.OK, details: '' } : { code: grpc.status.UNKNOWN, details: 'no SVIDs in response' }),
    );
    stream.on('error', (e: grpc.ServiceError) => settle({ code: e.code, details: e.details }));
    stream.once('end', () => settle({ code: grpc.status.UNKNOWN, details: 'stream ended without a message' }));
  });
}

export function createHealthService(deps: HealthDeps): UntypedServiceImplementation {
  const log = deps.log ?? (() => {});
  return {
    Check(call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, callback: sendUnaryData<HealthCheckResponse>) {
      if (call.request.service !== '') {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: PER_SERVICE });
        return;
      }
      void fetchOwnX509Context(deps.socketPath, call).then((r) => {
        if (call.cancelled) return;
        if (r.code === grpc.status.OK || r.code === grpc.status.PERMISSION_DENIED) {
          callback(null, { status: 'SERVING' });
          return;
        }
        log(`health check failed: unable to fetch X.509 context from Workload API: ${grpc.status[r.code]}: ${r.details}`);
        callback(null, { status: 'NOT_SERVING' });
      });
    },
  };
}
