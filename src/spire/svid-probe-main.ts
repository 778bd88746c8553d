// Runs inside a sandbox pod (bundled, plain node): asks the Workload API for a JWT-SVID until one
// comes back or time runs out, and reports the outcome over IPC. Exits on IPC disconnect, as the
// sandbox requires of pod processes.
import * as grpc from '@grpc/grpc-js';
import { SECURITY_HEADER, workloadProto } from '../proto/index.js';
import type { ProbeRequest, ProbeResult } from './svid-probe.js';

process.on('disconnect', () => process.exit(0));
const req = JSON.parse(process.argv[2] ?? '{}') as ProbeRequest;
const started = Date.now();
const client = new (workloadProto().SpiffeWorkloadAPI)(`unix:${req.socket}`, grpc.credentials.createInsecure());
const md = new grpc.Metadata();
md.set(SECURITY_HEADER, 'true');
let attempts = 0;
let last: { code: number; details: string } | null = null;

function finish(result: ProbeResult): void {
  client.close();
  if (!process.send) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  }
  process.send(result, () => process.exit(0));
}

function attempt(): void {
  attempts++;
  const left = started + req.timeoutMs - Date.now();
  client.FetchJWTSVID({ audience: [req.audience] }, md, { deadline: Date.now() + Math.max(100, Math.min(5000, left)) }, (err, res) => {
    const svid = res?.svids?.[0];
    if (!err && svid) {
      finish({ ok: true, spiffeId: svid.spiffe_id, attempts, afterMs: Date.now() - started });
      return;
    }
    last = err ? { code: err.code, details: err.details } : { code: 0, details: 'answer without SVIDs' };
    if (Date.now() + req.intervalMs >= started + req.timeoutMs) {
      finish({ ok: false, attempts, afterMs: Date.now() - started, lastCode: last.code, lastDetails: last.details });
      return;
    }
    setTimeout(attempt, req.intervalMs);
  });
}

attempt();
