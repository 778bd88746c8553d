// SPIRE heap profiles: the sampler saves what the agent's pprof endpoint serves into the
// repetition's folder and notes it on the timeline; an endpoint that does not answer yields nothing.
// The endpoint here is a real HTTP server on loopback standing in for spire-agent's profiling port.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseScenario, type SpireAgent } from '../../src/scenario/index.js';
import { heapProfileFile, spireHeapProfileSampler } from '../../src/spire/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-heap-'));
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

async function pprofServer(body: Buffer): Promise<number> {
  const srv = createServer((req, res) => {
    if (req.url === '/debug/pprof/heap') res.end(body);
    else res.writeHead(404).end();
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return (srv.address() as AddressInfo).port;
}

function parseSpire(agent: Record<string, unknown>) {
  return parseScenario({ name: 't', duration: '1s', variants: [{ name: 's', agent: { kind: 'spire', ...agent } }], load: { pods: 1, workersPerPod: 1 } });
}

describe('spire heap profiles', () => {
  it('saves the served profile under its time and notes the file', async () => {
    const body = Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4]);
    const port = await pprofServer(body);
    const sampler = spireHeapProfileSampler({ port: () => port, dir, intervalMs: 5000 });
    const line = await sampler.sample(12_345);
    expect(line).toEqual({ kind: 'event', type: 'note', t: 12_345, detail: `spire heap profile ${heapProfileFile(12_345)} (8 bytes)` });
    expect(readFileSync(join(dir, 'spire-heap-12345ms.pb.gz'))).toEqual(body);
  });

  it('yields nothing while the agent is down or its endpoint does not answer', async () => {
    expect(await spireHeapProfileSampler({ port: () => null, dir, intervalMs: 5000 }).sample(1)).toBeNull();
    const port = await pprofServer(Buffer.alloc(0));
    servers.pop()!.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(await spireHeapProfileSampler({ port: () => port, dir, intervalMs: 1000 }).sample(2)).toBeNull();
  });

  it('is a spire setting of at least 1s, refused on reference agents', () => {
    expect((parseSpire({ heapProfiles: '5s' }).scenario.variants[0]!.agent as SpireAgent).heapProfiles).toBe(5000);
    expect(() => parseSpire({ heapProfiles: '200ms' })).toThrow(/heapProfiles.*at least 1s/);
    expect(() =>
      parseScenario({
        name: 't',
        duration: '1s',
        variants: [{ name: 'r', agent: { kind: 'reference', heapProfiles: '5s' } }],
        load: { pods: 1, workersPerPod: 1 },
      }),
    ).toThrow(/heapProfiles.*not a setting of a reference agent/);
  });
});
