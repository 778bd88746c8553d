// Whether what the agent and the runner call on loopback answers, proven before anything starts:
// a TCP connection to 127.0.0.1, the kubelet emulator answering GET /pods once as the agent will
// ask it (TLS and bearer token as the variant sets them), and an HTTP endpoint on the agents'
// metrics address answering the runner. The agents, the pods and the runner share this network
// namespace, so what the runner reaches here they reach. With loopback down every attestation
// would fail (`connect ENETUNREACH` in the agent's log) and the run would look like a weak storm.
import { createServer as createHttpServer, get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { connect, createServer, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { PreflightFailure } from '../errors.js';
import { startKubeletEmulator } from './kubelet-emulator.js';

/** The kubelet emulator as a variant's agent will call it. */
export interface KubeletProbe {
  tls: boolean;
  token?: string | undefined;
}

const LOOPBACK = '127.0.0.1';

function errText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.syscall ?? 'connect'} ${e.code}` : e.message;
}

/** A TCP listener on 127.0.0.1 and a connection to it: null, or why the connection failed. */
async function loopbackRefusal(timeoutMs: number): Promise<string | null> {
  const server = createServer((c) => c.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, LOOPBACK, resolve);
    });
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve, reject) => {
      const c = connect(port, LOOPBACK);
      c.setTimeout(timeoutMs, () => c.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
      c.once('connect', () => {
        c.destroy();
        resolve();
      });
      c.once('error', reject);
    });
    return null;
  } catch (err) {
    return errText(err);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Whether any interface of this network namespace has 127.0.0.1 (lo once it is up). */
function loopbackHasAddress(): string | null {
  return Object.entries(networkInterfaces()).find(([, addrs]) => addrs?.some((a) => a.internal && a.address === LOOPBACK))?.[0] ?? null;
}

/** Loopback down (no interface has 127.0.0.1) or refusing connections (a firewall rule on it). */
function loopbackFailure(refused: string): PreflightFailure {
  const lo = loopbackHasAddress();
  const needs = `the kubelet emulator, the agents' metrics and SPIRE's server listen there, so every attestation would fail`;
  if (lo === null)
    return new PreflightFailure(
      'ATTESTORM_ERR_LOOPBACK',
      `loopback is down: no interface of this network namespace has ${LOOPBACK} and a connection to a listener there failed (${refused}); ${needs}`,
      'ip link set lo up (as root, in the network namespace the run is in)',
    );
  return new PreflightFailure(
    'ATTESTORM_ERR_LOOPBACK',
    `loopback refuses connections: ${lo} has ${LOOPBACK}, but a connection to a listener there failed (${refused}); ${needs}`,
    'remove the firewall rule that drops or rejects loopback traffic (iptables -S, nft list ruleset)',
  );
}

/** GET url with the given CA and headers: the status and body, or throws. */
function getOnce(url: string, opts: { ca?: string; headers?: Record<string, string>; timeoutMs: number }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const options = { headers: opts.headers ?? {}, timeout: opts.timeoutMs, ...(opts.ca ? { ca: opts.ca } : {}) };
    const req = url.startsWith('https:') ? httpsGet(url, options, onResponse) : httpGet(url, options, onResponse);
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer in ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
  });
}

/** The kubelet emulator started as a variant's would be, asked GET /pods once as its agent asks. */
async function kubeletFailure(k: KubeletProbe, timeoutMs: number): Promise<PreflightFailure | null> {
  const what = `the kubelet emulator (${k.tls ? 'https' : 'http'}${k.token !== undefined ? ', bearer token' : ''})`;
  let emulator;
  try {
    emulator = await startKubeletEmulator({ tls: k.tls, ...(k.token !== undefined ? { token: k.token } : {}), fillerPods: 0, podSource: () => [] });
  } catch (err) {
    return new PreflightFailure(
      'ATTESTORM_ERR_KUBELET_UNREACHABLE',
      `${what} cannot start on ${LOOPBACK}: ${(err as Error).message}`,
      'free loopback ports or lift what refuses a listener there',
    );
  }
  try {
    const r = await getOnce(`${emulator.url}/pods`, {
      ...(emulator.caPem ? { ca: emulator.caPem } : {}),
      ...(k.token !== undefined ? { headers: { authorization: `Bearer ${k.token}` } } : {}),
      timeoutMs,
    });
    const list = r.status === 200 ? (JSON.parse(r.body) as { kind?: string }) : null;
    if (list?.kind === 'PodList') return null;
    return new PreflightFailure(
      'ATTESTORM_ERR_KUBELET_UNREACHABLE',
      `${what} at ${emulator.url} answered GET /pods with ${r.status} ${r.body.slice(0, 120)} instead of a PodList`,
      "none on this machine: the emulator's own answer is wrong (a defect of attestorm's; file it with this message)",
    );
  } catch (err) {
    return new PreflightFailure(
      'ATTESTORM_ERR_KUBELET_UNREACHABLE',
      `${what} at ${emulator.url} did not answer GET /pods (${errText(err)}): every attestation would fail`,
      `let this host reach its own ${LOOPBACK} ports (no firewall rule that drops them on lo)`,
    );
  } finally {
    await emulator.close();
  }
}

/** An HTTP endpoint on the agents' metrics address, read by the runner as the samplers read the agent's. */
async function metricsFailure(timeoutMs: number): Promise<PreflightFailure | null> {
  const server = createHttpServer((_req, res) => res.end('probe_up 1\n'));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, LOOPBACK, resolve);
    });
    const url = `http://${LOOPBACK}:${(server.address() as AddressInfo).port}/metrics`;
    const r = await getOnce(url, { timeoutMs });
    if (r.status === 200 && r.body.includes('probe_up 1')) return null;
    return new PreflightFailure(
      'ATTESTORM_ERR_METRICS_UNREACHABLE',
      `an endpoint on the agents' metrics address ${url} answered ${r.status} to the runner instead of its own text`,
      `let the runner reach its own ${LOOPBACK} ports (no firewall rule that drops them on lo)`,
    );
  } catch (err) {
    return new PreflightFailure(
      'ATTESTORM_ERR_METRICS_UNREACHABLE',
      `an endpoint on the agents' metrics address ${LOOPBACK} does not answer the runner (${errText(err)}): no in-flight attestations or rejections would be sampled`,
      `let this host reach its own ${LOOPBACK} ports (no firewall rule that drops them on lo)`,
    );
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * Every failure of what the run calls on loopback: loopback itself (then nothing more is asked:
 * everything else follows from it), else each kubelet emulator set-up once and the metrics address.
 */
export async function loopbackFailures(o: { kubelets: readonly KubeletProbe[]; metrics: boolean; timeoutMs?: number }): Promise<PreflightFailure[]> {
  const timeoutMs = o.timeoutMs ?? 5_000;
  const refused = await loopbackRefusal(timeoutMs);
  if (refused !== null) return [loopbackFailure(refused)];
  const failures: PreflightFailure[] = [];
  const seen = new Set<string>();
  for (const k of o.kubelets) {
    const key = JSON.stringify([k.tls, k.token ?? null]);
    if (seen.has(key)) continue;
    seen.add(key);
    const f = await kubeletFailure(k, timeoutMs);
    if (f) failures.push(f);
  }
  if (o.metrics) {
    const f = await metricsFailure(timeoutMs);
    if (f) failures.push(f);
  }
  return failures;
}
