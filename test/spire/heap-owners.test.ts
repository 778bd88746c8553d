// SPIRE heap profiles by owner, on real profiles of spire-agent (SPIRE 1.16.0-dev, main and main
// with its limiter before attestation) taken under the 4 pods × 300 workers storm at 512 MiB. Every
// expected figure is what `go tool pprof` says of the same file: the total from
//   go tool pprof -top -nodefraction=0 -sample_index=inuse_space <file>
// and each owner from the same with -focus=<owner's frames> -ignore=<the frames of every owner before it>.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Profile, StringTable, ValueType } from 'pprof-format';
import { SPIRE_HEAP_OWNERS, type SpireHeapOwner } from '../../src/contract/index.js';
import { heapByOwner, heapOwnerOf, SPIRE_HEAP_RULES, summarizeRepetitionHeap } from '../../src/spire/index.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'heap');
const MiB = 2 ** 20;
const tmp = mkdtempSync(join(tmpdir(), 'attestorm-heap-owners-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** pprof's figures (its "MB" are MiB), two decimals as it prints them. */
const PPROF: Record<string, { total: number } & Record<SpireHeapOwner, number>> = {
  // main-pre (limiter before attestation), 235 s into the storm.
  'main-pre-235034ms.pb.gz': {
    total: 54.31,
    'pod-list': 22.51,
    'log-entries': 1,
    'read-buffers': 2.51,
    'grpc-client': 1,
    'grpc-transport': 12.21,
    goroutines: 5.53,
    calls: 4.52,
    other: 5.05,
  },
  // main with its shipped limiter (after attestation), 55 s: 27 s before its first OOM kill.
  'main-limited-54998ms.pb.gz': {
    total: 140.82,
    'pod-list': 23.07,
    'log-entries': 9,
    'read-buffers': 20.08,
    'grpc-client': 14.03,
    'grpc-transport': 41.26,
    goroutines: 5.5,
    calls: 19.03,
    other: 8.85,
  },
  // main without a limiter, 145 s: 22 s before its first OOM kill.
  'main-off-145003ms.pb.gz': {
    total: 238.93,
    'pod-list': 23.43,
    'log-entries': 16,
    'read-buffers': 43.66,
    'grpc-client': 49.04,
    'grpc-transport': 65.93,
    goroutines: 3,
    calls: 30.02,
    other: 7.85,
  },
  // The same agent 5 s before the calls: start-up tables only (pprof: 5164.10kB, all of it outside every owner's frames).
  'main-off--4999ms.pb.gz': {
    total: 5164.1 / 1024,
    'pod-list': 0,
    'log-entries': 0,
    'read-buffers': 0,
    'grpc-client': 0,
    'grpc-transport': 0,
    goroutines: 0,
    calls: 0,
    other: 5164.1 / 1024,
  },
};

describe('SPIRE heap profiles by owner', () => {
  for (const [file, want] of Object.entries(PPROF)) {
    it(`${file}: the total and every owner as go tool pprof sums them`, () => {
      const got = heapByOwner(readFileSync(join(FIXTURES, file)), file);
      expect(got.totalBytes / MiB).toBeCloseTo(want.total, 2);
      for (const owner of SPIRE_HEAP_OWNERS) expect([owner, got.byOwner[owner] / MiB]).toEqual([owner, expect.closeTo(want[owner], 2)]);
      // Every live byte has exactly one owner.
      expect(Object.values(got.byOwner).reduce((a, b) => a + b, 0)).toBe(got.totalBytes);
    });
  }

  it("tries the rules in the owners' order, other last", () => {
    expect([...SPIRE_HEAP_RULES.map((r) => r.owner), 'other']).toEqual([...SPIRE_HEAP_OWNERS]);
  });

  it('charges an allocation to the most specific owner on its stack', () => {
    const handler = ['google.golang.org/grpc.(*Server).processUnaryRPC', 'google.golang.org/grpc.(*Server).handleStream'];
    // A logrus entry made in a Workload API handler is a log entry, not the call.
    expect(
      heapOwnerOf(['github.com/sirupsen/logrus.(*Entry).WithFields', 'github.com/spiffe/spire/pkg/agent/attestor/workload.(*attestor).Attest', ...handler]),
    ).toBe('log-entries');
    expect(heapOwnerOf(['context.WithValue', ...handler])).toBe('calls');
    // bufio.NewReaderSize is a read buffer under gRPC's transport only; anything else the transport allocates is the transport.
    const framer = ['google.golang.org/grpc/internal/transport.bufferedReader', 'google.golang.org/grpc/internal/transport.newFramer'];
    expect(heapOwnerOf(['bufio.NewReaderSize', ...framer])).toBe('read-buffers');
    expect(heapOwnerOf(['golang.org/x/net/http2.NewFramer', ...framer])).toBe('grpc-transport');
    expect(heapOwnerOf(['bufio.NewReaderSize', 'net/http.newBufioReader', 'net/http.(*conn).serve'])).toBe('other');
    // The client side of a plugin call shares the transport's frames but is the client.
    expect(heapOwnerOf(['google.golang.org/grpc/internal/transport.(*http2Client).newStream', 'google.golang.org/grpc.(*clientStream).newAttemptLocked'])).toBe(
      'grpc-client',
    );
    expect(heapOwnerOf(['runtime.mallocgc', 'runtime.newobject', 'runtime.malg', 'runtime.newproc1'])).toBe('goroutines');
    expect(heapOwnerOf([])).toBe('other');
  });

  it('refuses what is not a heap profile, naming the input and what it lacks', () => {
    expect(() => heapByOwner(Buffer.from('not a profile at all'), 'junk.pb.gz')).toThrow(/junk\.pb\.gz is not a pprof profile/);
    const strings = new StringTable();
    const cpu = new Profile({ sampleType: [new ValueType({ type: strings.dedup('samples'), unit: strings.dedup('count') })], stringTable: strings });
    expect(() => heapByOwner(cpu.encode(), 'cpu.pb')).toThrow(/cpu\.pb has no inuse_space samples \(sample types: samples\): a heap profile/);
  });
});

describe("a repetition's heap profiles", () => {
  it('summarizes the largest and the last, and lists what it could not read', () => {
    const dir = mkdtempSync(join(tmp, 'rep-'));
    copyFileSync(join(FIXTURES, 'main-off--4999ms.pb.gz'), join(dir, 'spire-heap--4999ms.pb.gz'));
    copyFileSync(join(FIXTURES, 'main-off-145003ms.pb.gz'), join(dir, 'spire-heap-145003ms.pb.gz'));
    copyFileSync(join(FIXTURES, 'main-limited-54998ms.pb.gz'), join(dir, 'spire-heap-295003ms.pb.gz'));
    writeFileSync(join(dir, 'spire-heap-300000ms.pb.gz'), 'cut off');
    writeFileSync(join(dir, 'agent.log'), '');
    const rec = summarizeRepetitionHeap(dir, 2)!;
    expect(rec.rep).toBe(2);
    expect(rec.profiles).toBe(3);
    expect(rec.largest.file).toBe('spire-heap-145003ms.pb.gz');
    expect(rec.largest.atMs).toBe(145_003);
    expect(rec.largest.totalBytes / MiB).toBeCloseTo(238.93, 2);
    expect(rec.largest.byOwner['read-buffers'] / MiB).toBeCloseTo(43.66, 2);
    expect(rec.last.file).toBe('spire-heap-295003ms.pb.gz');
    expect(rec.last.totalBytes / MiB).toBeCloseTo(140.82, 2);
    expect(rec.unreadable).toEqual([expect.stringMatching(/^spire-heap-300000ms\.pb\.gz: .*is not a pprof profile/)]);
  });

  it('is null for a folder without profiles', () => {
    expect(summarizeRepetitionHeap(mkdtempSync(join(tmp, 'none-')), 1)).toBeNull();
  });
});
