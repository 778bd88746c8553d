// The five Workload API methods and their binding to grpc-js: each call gets a CallContext, runs
// the composed pipeline, then the method's own answer. Streams send at once, again on every
// rotation, and end when the client cancels or the agent drains.
import { status } from '@grpc/grpc-js';
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import { MalformedRequest, METHODS } from '../proto/index.js';
import type {
  JWTBundlesResponse,
  JWTSVIDRequest__Output,
  JWTSVIDResponse,
  ValidateJWTSVIDRequest__Output,
  ValidateJWTSVIDResponse,
  X509BundlesResponse,
  X509SVIDResponse,
} from '../proto/index.js';
import type { AgentMetrics } from './metrics.js';
import { CallError, entriesOf, type CallContext, type Cancellation, type Pipeline } from './pipeline.js';
import { toStruct } from './proto-struct.js';
import { spiffeIdProblem } from './spiffe-id.js';
import type { CallerCreds, IdentityIssuer, LimitMethodKey } from './types.js';

export interface HandlerDeps {
  pipeline: Pipeline;
  issuer: IdentityIssuer;
  metrics: AgentMetrics;
  /** The credentials of the connection a call arrived on (see server.ts). */
  callerOf(peer: string): CallerCreds | undefined;
  log?: (message: string) => void;
  /** The pid whose calls are the agent's own (its health check): left out of the call counts. */
  agentPid?: number | null;
}

export interface WorkloadHandlers {
  /** For grpc.Server#addService with strictWorkloadService(). */
  readonly implementation: UntypedServiceImplementation;
  /** Number of open streams. */
  openStreams(): number;
  /** Ends every open stream with OK, so a graceful drain is not held up by watchers. */
  endStreams(): void;
}

type MethodName = keyof typeof METHODS;

interface Call {
  getPeer(): string;
  metadata: CallContext['metadata'];
  readonly cancelled: boolean;
  once(event: 'cancelled', listener: () => void): unknown;
  off(event: 'cancelled', listener: () => void): unknown;
}

/** A class rather than an object literal with closures: one is made for every call. */
class CallCancellation implements Cancellation {
  readonly #call: Call;
  constructor(call: Call) {
    this.#call = call;
  }
  get cancelled(): boolean {
    return this.#call.cancelled;
  }
  onCancel(fn: () => void): () => void {
    const call = this.#call;
    call.once('cancelled', fn);
    return () => void call.off('cancelled', fn);
  }
}

/** A method's fixed facts: its limiter config key, and whether it needs an issued identity. */
const METHOD_FACTS: Record<MethodName, { limitKey: LimitMethodKey; needsIdentity: boolean }> = {
  FetchX509SVID: { limitKey: 'fetch_x509_svid', needsIdentity: true },
  FetchX509Bundles: { limitKey: 'fetch_x509_bundles', needsIdentity: true },
  FetchJWTSVID: { limitKey: 'fetch_jwt_svid', needsIdentity: true },
  FetchJWTBundles: { limitKey: 'fetch_jwt_bundles', needsIdentity: true },
  // SPIRE attests ValidateJWTSVID callers too (the brief: every call is attested) but validating a
  // token does not require the caller to hold an identity of its own.
  ValidateJWTSVID: { limitKey: 'validate_jwt_svid', needsIdentity: false },
};

const CALLER_GONE = 'could not verify existence of the original caller';

function statusName(code: number): string {
  return (status as unknown as Record<number, string>)[code] ?? String(code);
}

function toCallError(err: unknown, log: (m: string) => void): CallError {
  if (err instanceof CallError) return err;
  log(`internal error: ${(err as Error)?.stack ?? String(err)}`);
  return new CallError(status.INTERNAL, 'internal error');
}

/** What every handler shares: the pipeline, the issuer, metrics, the log and the open streams. */
interface Runtime {
  pipeline: HandlerDeps['pipeline'];
  issuer: HandlerDeps['issuer'];
  metrics: HandlerDeps['metrics'];
  callerOf: HandlerDeps['callerOf'];
  log: (m: string) => void;
  /** Each open stream's drain: ends it (call.end) and forgets it. */
  streams: Set<() => void>;
  agentPid: number | null;
}

/**
 * Whether a call is the agent's own (its health check's fetch). SPIRE leaves those out of its
 * call metrics, so a probe does not show up as Workload API traffic; so does this agent.
 */
function isAgentCall(rt: Runtime, call: Call): boolean {
  return rt.agentPid !== null && rt.callerOf(call.getPeer())?.pid === rt.agentPid;
}

function context(rt: Runtime, name: MethodName, call: Call, checkRequest?: (request: unknown) => void, request?: unknown): CallContext {
  const caller = rt.callerOf(call.getPeer());
  if (!caller) throw new CallError(status.UNAUTHENTICATED, CALLER_GONE);
  const facts = METHOD_FACTS[name];
  return {
    method: name,
    path: METHODS[name],
    limitKey: facts.limitKey,
    needsIdentity: facts.needsIdentity,
    metadata: call.metadata,
    caller,
    cancellation: new CallCancellation(call),
    checkRequest,
    request,
    selectors: [],
  };
}

function failUnary<Res>(rt: Runtime, name: MethodName, call: Call, callback: sendUnaryData<Res>, err: unknown, counted: boolean): void {
  const e = toCallError(err, rt.log);
  if (counted) rt.metrics.callDone(name, call.cancelled ? 'CANCELLED' : statusName(e.code));
  callback({ code: e.code, details: e.message });
}

function unary<Req, Res>(rt: Runtime, name: MethodName, check: ((req: Req) => void) | undefined, answer: (ctx: CallContext, req: Req) => Promise<Res>) {
  const { pipeline, metrics } = rt;
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    // A request the strict decoder refused (see proto/strict-request.ts) ends here: no stage runs.
    const req: unknown = call.request;
    if (req instanceof MalformedRequest) {
      metrics.callDone(name, 'INTERNAL');
      callback({ code: status.INTERNAL, details: req.details });
      return;
    }
    // The pipeline runs synchronously up to its first await: a call refused by the header check
    // or a pre-attestation limiter is answered without a promise or a closure being made.
    const counted = !isAgentCall(rt, call);
    let ctx: CallContext;
    let pending: void | Promise<void>;
    try {
      ctx = context(rt, name, call, check as ((request: unknown) => void) | undefined, req);
      pending = pipeline(ctx);
    } catch (err) {
      failUnary(rt, name, call, callback, err, counted);
      return;
    }
    const answered = pending ? pending.then(() => answer(ctx, call.request)) : answer(ctx, call.request);
    answered.then(
      (res) => {
        if (counted) metrics.callDone(name, call.cancelled ? 'CANCELLED' : 'OK');
        callback(null, res);
      },
      (err: unknown) => failUnary(rt, name, call, callback, err, counted),
    );
  };
}

/** Metrics count a stream once, with the status of its opening (OK once the first message is out). */
function stream<Res>(rt: Runtime, name: MethodName, message: (ctx: CallContext) => Promise<Res>) {
  const { pipeline, issuer, metrics, log, streams } = rt;
  return (call: ServerWritableStream<unknown, Res>) => {
    if (call.request instanceof MalformedRequest) {
      metrics.callDone(name, 'INTERNAL');
      call.emit('error', { code: status.INTERNAL, details: call.request.details });
      return;
    }
    let ended = false;
    // The agent's own stream starts out as counted, so it never is.
    let counted = isAgentCall(rt, call);
    let unsubscribe = () => {};
    const count = (code: string) => {
      if (counted) return;
      counted = true;
      metrics.callDone(name, code);
    };
    const end = () => {
      if (ended) return;
      ended = true;
      unsubscribe();
      streams.delete(drain);
    };
    const drain = () => {
      end();
      call.end();
    };
    // Ends the stream with a status, unless it has already ended (drained, cancelled).
    const fail = (err: unknown) => {
      const e = toCallError(err, log);
      count(call.cancelled ? 'CANCELLED' : statusName(e.code));
      if (ended) return;
      end();
      if (!call.cancelled) call.emit('error', { code: e.code, details: e.message });
    };
    call.on('cancelled', () => {
      count('CANCELLED');
      end();
    });
    streams.add(drain);
    (async () => {
      const ctx = context(rt, name, call);
      const pending = pipeline(ctx);
      if (pending) await pending;
      if (ended) return;
      // Rotations are chained so updates leave in the order they were made.
      let chain = message(ctx).then((m) => {
        if (!ended) call.write(m);
      });
      await chain;
      if (ended) return;
      count('OK');
      unsubscribe = issuer.onRotate(() => {
        chain = chain.then(async () => {
          const m = await message(ctx);
          if (!ended) call.write(m);
        });
        chain.catch((err) => {
          log(`${name} stream update failed: ${(err as Error)?.message ?? String(err)}`);
          fail(new CallError(status.UNAVAILABLE, 'identity update failed'));
        });
      });
    })().catch(fail);
  };
}

/** The five Workload API methods: each one's request check and answer, behind the shared pipeline. */
function implementationOf(rt: Runtime): UntypedServiceImplementation {
  const { issuer } = rt;
  const bundleKey = `spiffe://${issuer.trustDomain}`;
  return {
    FetchJWTSVID: unary<JWTSVIDRequest__Output, JWTSVIDResponse>(
      rt,
      'FetchJWTSVID',
      (req) => {
        if (req.audience.length === 0) throw new CallError(status.INVALID_ARGUMENT, 'audience must be specified');
        if (req.spiffe_id !== '') {
          const problem = spiffeIdProblem(req.spiffe_id);
          if (problem) throw new CallError(status.INVALID_ARGUMENT, `invalid requested SPIFFE ID: spiffe_id ${problem}`);
        }
      },
      async (ctx, req) => {
        let entries = entriesOf(ctx, issuer);
        if (req.spiffe_id !== '') entries = entries.filter((e) => e.spiffeId === req.spiffe_id);
        if (entries.length === 0) throw new CallError(status.PERMISSION_DENIED, 'no identity issued');
        const svids = await Promise.all(entries.map((e) => issuer.jwtSvid(e, req.audience)));
        return { svids: svids.map((s) => ({ spiffe_id: s.spiffeId, svid: s.token, hint: s.hint })) };
      },
    ),

    ValidateJWTSVID: unary<ValidateJWTSVIDRequest__Output, ValidateJWTSVIDResponse>(
      rt,
      'ValidateJWTSVID',
      (req) => {
        if (req.audience === '') throw new CallError(status.INVALID_ARGUMENT, 'audience must be specified');
        if (req.svid === '') throw new CallError(status.INVALID_ARGUMENT, 'svid must be specified');
      },
      async (_ctx, req) => {
        let result: { spiffeId: string; claims: Record<string, unknown> };
        try {
          result = await issuer.validateJwt(req.svid, req.audience);
        } catch (err) {
          throw new CallError(status.INVALID_ARGUMENT, (err as Error)?.message || 'invalid JWT-SVID');
        }
        return { spiffe_id: result.spiffeId, claims: toStruct(result.claims) };
      },
    ),

    FetchX509SVID: stream<X509SVIDResponse>(rt, 'FetchX509SVID', async (ctx) => {
      const bundle = issuer.x509BundleDer();
      const svids = await Promise.all(entriesOf(ctx, issuer).map((e) => issuer.x509Svid(e)));
      return {
        svids: svids.map((s) => ({
          spiffe_id: s.spiffeId,
          x509_svid: s.certChainDer,
          x509_svid_key: s.keyDer,
          bundle,
          hint: s.hint,
        })),
        crl: [],
        federated_bundles: {},
      };
    }),

    FetchX509Bundles: stream<X509BundlesResponse>(rt, 'FetchX509Bundles', async () => ({
      crl: [],
      bundles: { [bundleKey]: issuer.x509BundleDer() },
    })),

    FetchJWTBundles: stream<JWTBundlesResponse>(rt, 'FetchJWTBundles', async () => ({
      bundles: { [bundleKey]: issuer.jwtBundleJson() },
    })),
  };
}

export function createHandlers(deps: HandlerDeps): WorkloadHandlers {
  const streams = new Set<() => void>();
  const rt: Runtime = {
    pipeline: deps.pipeline,
    issuer: deps.issuer,
    metrics: deps.metrics,
    callerOf: deps.callerOf,
    log: deps.log ?? (() => {}),
    streams,
    agentPid: deps.agentPid ?? null,
  };
  return {
    implementation: implementationOf(rt),
    openStreams: () => streams.size,
    endStreams() {
      for (const end of [...streams]) end();
    },
  };
}
