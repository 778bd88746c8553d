// SPIRE goroutine profiles by owner, on profiles real spire-agents served under a storm here
// (1.15.3's podListFetcher, 1.15.2's singleflight; 2 pods × 40 workers, kubelet answering in 300 ms),
// and the sampler against a real HTTP server on loopback standing in for the profiling port.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SPIRE_GOROUTINE_OWNERS } from '../../src/contract/index.js';
import {
  goroutineOwnerOf,
  goroutinesByOwner,
  parseGoroutineProfile,
  spireGoroutineProfileSampler,
  SPIRE_GOROUTINE_RULES,
  summarizeRepetitionGoroutines,
} from '../../src/spire/index.js';

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', 'goroutines', name);
const text = (name: string) => gunzipSync(readFileSync(fixture(name))).toString('utf8');

describe('SPIRE goroutines by owner', () => {
  it('keeps its rules in the owners order', () => {
    expect(SPIRE_GOROUTINE_RULES.map((r) => r.owner)).toEqual(SPIRE_GOROUTINE_OWNERS.filter((o) => o !== 'other'));
  });

  it("counts 1.15.3's attestations waiting in the pod-list fetcher and its one fetch", () => {
    const { total, byOwner } = goroutinesByOwner(text('v1.15.3-storm.txt.gz'), 'v1.15.3');
    expect(total).toBe(556);
    expect(byOwner['pod-list-wait']).toBe(80);
    expect(byOwner['kubelet-fetch']).toBe(1);
    expect(Object.values(byOwner).reduce((a, b) => a + b, 0)).toBe(total);
  });

  it("counts 1.15.2's waiters in singleflight.Do apart from the one in doCall", () => {
    const { byOwner } = goroutinesByOwner(text('v1.15.2-storm.txt.gz'), 'v1.15.2');
    expect(byOwner['pod-list-wait']).toBe(22);
    expect(byOwner['kubelet-fetch']).toBe(1);
    expect(byOwner['kubelet-http']).toBeGreaterThan(0);
  });

  it('charges a stack to its most specific owner', () => {
    const k8s = 'github.com/spiffe/spire/pkg/agent/plugin/workloadattestor/k8s.';
    expect(goroutineOwnerOf(['runtime.gopark', 'golang.org/x/sync/singleflight.(*Group).doCall', 'golang.org/x/sync/singleflight.(*Group).Do'])).toBe(
      'kubelet-fetch',
    );
    expect(goroutineOwnerOf(['runtime.gopark', `${k8s}(*podListFetcher).fetchNext`, 'google.golang.org/grpc.(*Server).handleStream'])).toBe('pod-list-wait');
    expect(goroutineOwnerOf(['runtime.gopark', 'google.golang.org/grpc/internal/transport.(*http2Server).keepalive'])).toBe('grpc-transport');
    expect(goroutineOwnerOf(['runtime.gopark', 'main.main'])).toBe('other');
  });

  it('refuses what is no goroutine profile, naming it', () => {
    expect(() => parseGoroutineProfile('heap profile: 1', 'x.txt')).toThrow(/x\.txt is not a goroutine profile/);
  });

  it('saves the served profile gzipped under its time and sums a folder of them', async () => {
    const body = text('v1.15.3-storm.txt.gz');
    const srv = createServer((req, res) => (req.url === '/debug/pprof/goroutine?debug=1' ? res.end(body) : res.writeHead(404).end()));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const dir = mkdtempSync(join(tmpdir(), 'attestorm-goroutines-'));
    try {
      const port = (srv.address() as AddressInfo).port;
      const sampler = spireGoroutineProfileSampler({ port: () => port, dir, intervalMs: 2000 });
      expect(await sampler.sample(4000)).toMatchObject({
        kind: 'event',
        type: 'note',
        detail: expect.stringContaining('spire-goroutines-4000ms.txt.gz') as string,
      });
      await sampler.sample(6000);
      const record = summarizeRepetitionGoroutines(dir, 1)!;
      expect(record.profiles).toBe(2);
      expect(record.series.map((s) => s.atMs)).toEqual([4000, 6000]);
      expect(record.largest.byOwner['pod-list-wait']).toBe(80);
    } finally {
      srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
