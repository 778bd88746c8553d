// Test harness for the agent: a real agent on a socket in a temp dir and real grpc-js clients.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { parseAgentConfig, startAgent, type AgentConfigInput, type RunningAgent, type StartAgentOptions } from '../../src/agent/index.js';
import { PROTO_PATH, SECURITY_HEADER, workloadProto, type SpiffeWorkloadAPIClient } from '../../src/proto/index.js';

export interface TestAgent {
  agent: RunningAgent;
  dir: string;
  socketPath: string;
  /** A client on its own connection (closed by stop()). */
  client(): SpiffeWorkloadAPIClient;
  stop(): Promise<void>;
}

export function tempDir(prefix = 'attestorm-agent-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestAgent(
  input: Partial<AgentConfigInput> = {},
  logs: string[] = [],
  opts: Pick<StartAgentOptions, 'limiterNow' | 'agentPid'> = {},
): Promise<TestAgent> {
  const dir = tempDir();
  const cfg = parseAgentConfig({ socket: join(dir, 'agent.sock'), metrics: '127.0.0.1:0', ...input });
  const socketPath = cfg.socket;
  // The test's own clients run in the agent's process: they are workloads here, not the agent's
  // own calls, unless a test says otherwise.
  const agent = await startAgent(cfg, { log: (m) => logs.push(m), graceMs: 1000, agentPid: null, ...opts });
  const clients: SpiffeWorkloadAPIClient[] = [];
  return {
    agent,
    dir,
    socketPath,
    client() {
      const c = newClient(socketPath);
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.close();
      await agent.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function newClient(socketPath: string, options: grpc.ChannelOptions = {}): SpiffeWorkloadAPIClient {
  const Client = workloadProto().SpiffeWorkloadAPI;
  // A fresh channel per client: grpc-js would otherwise share one subchannel (one connection).
  return new Client(`unix:${socketPath}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1, ...options });
}

export function header(values: string[] = ['true']): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const v of values) md.add(SECURITY_HEADER, v);
  return md;
}

/** Calls a unary method; resolves with the response or rejects with the ServiceError. */
export function unary<Req, Res>(
  client: SpiffeWorkloadAPIClient,
  method: 'FetchJWTSVID' | 'ValidateJWTSVID',
  req: Req,
  md: grpc.Metadata = header(),
  opts: grpc.CallOptions = {},
): Promise<Res> {
  return new Promise((resolve, reject) => {
    (client[method] as unknown as (r: Req, m: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: Res) => void) => void).call(
      client,
      req,
      md,
      opts,
      (err, res) => (err ? reject(err) : resolve(res!)),
    );
  });
}

/** Reads the first message of a server stream, then cancels it. */
export function firstMessage<Res>(
  client: SpiffeWorkloadAPIClient,
  method: 'FetchX509SVID' | 'FetchX509Bundles' | 'FetchJWTBundles',
  md: grpc.Metadata = header(),
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const call = (client[method] as unknown as (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<Res>).call(client, {}, md);
    call.once('data', (m: Res) => {
      resolve(m);
      call.cancel();
    });
    call.on('error', (e: grpc.ServiceError) => {
      if (e.code !== grpc.status.CANCELLED) reject(e);
    });
  });
}

/** The value of one sample line of a Prometheus text page, or 0 when absent. */
export async function scrape(url: string, sample: string): Promise<number> {
  const text = await (await fetch(url)).text();
  for (const line of text.split('\n')) {
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  }
  return 0;
}

/** Splits concatenated DER certificates (an SVID chain or a bundle) into single certificates. */
export function splitDer(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let i = 0;
  while (i < buf.length) {
    if (buf[i] !== 0x30) throw new Error(`not a DER SEQUENCE at offset ${i}`);
    let len = buf[i + 1]!;
    let hdr = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let k = 0; k < n; k++) len = len * 256 + buf[i + 2 + k]!;
      hdr = 2 + n;
    }
    out.push(buf.subarray(i, i + hdr + len));
    i += hdr + len;
  }
  return out;
}

/**
 * A procfs for the agent to read (its procRoot): per pid, stat/status/exe are symlinks to the real
 * /proc entries (so they vanish when the process does) and cgroup is written with the given text,
 * to place a real process in a pod of our choosing.
 */
export function fakeProcRoot(dir: string, pids: Record<number, string>): string {
  const root = join(dir, 'proc');
  for (const [pid, cgroup] of Object.entries(pids)) {
    const d = join(root, pid);
    mkdirSync(d, { recursive: true });
    for (const f of ['stat', 'status', 'exe']) symlinkSync(`/proc/${pid}/${f}`, join(d, f));
    writeFileSync(join(d, 'cgroup'), cgroup);
  }
  return root;
}

export function podCgroup(podUID: string, containerID: string): string {
  return `0::/kubepods/besteffort/pod${podUID}/${containerID}\n`;
}

export interface ChildCaller {
  pid: number;
  /** Tells a 'wait' child to make its call; resolves with its result line. */
  go(): Promise<ChildResult>;
  /** Tells a 'wait' child to make its call without waiting for the answer. */
  send(): void;
  /** The result line of a 'now' or 'exit-after-send' child. */
  result(): Promise<ChildResult>;
  kill(): void;
  /** Resolves once the child process has exited. */
  exited: Promise<void>;
}

export interface ChildResult {
  pid: number;
  uid: number;
  gid: number;
  code: number;
  details: string;
  spiffeIds: string[];
}

const FIXTURE = fileURLToPath(new URL('./fixtures/call-once.mjs', import.meta.url));

/**
 * Spawns a separate workload process that makes one FetchJWTSVID call. mode 'wait' resolves once
 * the child is running and waits for go(); 'now' calls at once; 'exit-after-send' dies mid-call.
 * The test owns the child: kill() reaps it, and it exits by itself after its call.
 */
export async function spawnCaller(socketPath: string, mode: 'wait' | 'now' | 'exit-after-send' = 'wait'): Promise<ChildCaller> {
  const child = spawn(process.execPath, [FIXTURE, socketPath, PROTO_PATH, mode], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const queue: string[] = [];
  const waiters: Array<(l: string) => void> = [];
  lines.on('line', (l) => (waiters.length ? waiters.shift()!(l) : queue.push(l)));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, sig) => reject(new Error(`caller child exited (${code ?? sig}) before answering`))),
  );
  exited.catch(() => {});
  const nextLine = () => Promise.race([new Promise<string>((r) => (queue.length ? r(queue.shift()!) : waiters.push(r))), exited]);
  let pid = child.pid!;
  if (mode === 'wait') pid = (JSON.parse(await nextLine()) as { pid: number }).pid;
  const result = mode === 'wait' ? undefined : nextLine().then((l) => JSON.parse(l) as ChildResult);
  result?.catch(() => {});
  return {
    pid,
    result: () => result ?? Promise.reject(new Error('a wait-mode child answers through go()')),
    send() {
      child.stdin!.write('go\n');
    },
    go() {
      child.stdin!.write('go\n');
      return nextLine().then((l) => JSON.parse(l) as ChildResult);
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    exited: new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    }),
  };
}
