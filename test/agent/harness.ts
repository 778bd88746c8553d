// Test harness for the agent: a real agent on a socket in a temp dir and real grpc-js clients.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { parseAgentConfig, startAgent, type AgentConfigInput, type RunningAgent } from '../../src/agent/index.js';
import { SECURITY_HEADER, workloadProto, type SpiffeWorkloadAPIClient } from '../../src/proto/index.js';

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

export async function startTestAgent(input: Partial<AgentConfigInput> = {}, logs: string[] = []): Promise<TestAgent> {
  const dir = tempDir();
  const socketPath = join(dir, 'agent.sock');
  const cfg = parseAgentConfig({ socket: socketPath, metrics: '127.0.0.1:0', ...input });
  const agent = await startAgent(cfg, { log: (m) => logs.push(m), graceMs: 1000 });
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
