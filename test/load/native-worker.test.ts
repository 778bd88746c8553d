// The native worker's pure parts, from JS: building and caching the binary (and the fallback when no
// compiler is found, on a PATH of the test's own), its command line, its HdrHistogram encoding
// (decoded by hdr-histogram-js, as the pod process decodes it) and its HPACK Huffman decoder
// (RFC 7541's examples).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assert, afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNativeBundles } from '../../src/load/bundle.js';
import { NATIVE_BINARY_PREFIX, NATIVE_SOURCE_DIR, buildNativeWorker, findExecutable, prebuildNativeWorker } from '../../src/load/native/build.js';
import { LatencyHistogram } from '../../src/load/worker/latency-histogram.js';
import { decodeHistogram } from '../../src/load/worker/interval.js';
import { nativeWorkerArgs } from '../../src/load/worker/native-args.js';
import { skipNote } from '../support/skip-note.js';

const dirs: string[] = [];
const temp = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `attestorm-${name}-`));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const hasCc = findExecutable(process.env.CC?.trim() || 'cc', process.env) !== null;
let binary = '';
beforeAll(async () => {
  if (!hasCc) return;
  const built = await buildNativeWorker();
  if (!built.ok) throw new Error(built.reason);
  binary = built.binary;
}, 120_000);

describe('native worker build', () => {
  it('builds into the cache dir under a name keyed by the sources and compiler, then reuses it', async (ctx) => {
    if (!hasCc) return (skipNote('native worker build', 'no cc in PATH'), ctx.skip());
    const cacheDir = temp('native-cache');
    const first = await buildNativeWorker({ cacheDir });
    assert(first.ok, first.ok ? '' : first.reason);
    expect(first.cached).toBe(false);
    expect(first.binary).toBe(join(cacheDir, `${NATIVE_BINARY_PREFIX}${first.key}`));
    expect(existsSync(first.binary)).toBe(true);
    expect(['static', 'dynamic']).toContain(first.linkage);
    // Another environment with the same compiler: the cached binary, not a new build.
    const again = await buildNativeWorker({ cacheDir, env: { ...process.env, PATH: `${process.env.PATH}:/nonexistent` } });
    expect(again).toMatchObject({ ok: true, cached: true, binary: first.binary, key: first.key });
  });

  it('a changed source builds anew under another key', async (ctx) => {
    if (!hasCc) return ctx.skip();
    const sourceDir = temp('native-src');
    cpSync(NATIVE_SOURCE_DIR, sourceDir, { recursive: true });
    const cacheDir = temp('native-cache');
    const a = await buildNativeWorker({ cacheDir, sourceDir });
    appendFileSync(join(sourceDir, 'main.c'), '\n/* changed */\n');
    const b = await buildNativeWorker({ cacheDir, sourceDir, env: { ...process.env, PATH: `${process.env.PATH}:/x` } });
    expect(a.ok && b.ok).toBe(true);
    if (a.ok && b.ok) {
      expect(b.key).not.toBe(a.key);
      expect(b.cached).toBe(false);
    }
  });

  it('without a compiler in PATH it says so, and client native falls back to h2 with the reason', async () => {
    const emptyBin = temp('no-cc');
    const env = { PATH: emptyBin };
    const built = await buildNativeWorker({ env, cacheDir: temp('native-cache') });
    expect(built.ok).toBe(false);
    if (!built.ok) expect(built.reason).toMatch(/^no C compiler: "cc" is not an executable in PATH \(.*no-cc.*\); install gcc or clang, or set CC$/);
    const bundles = await loadNativeBundles({ env, cacheDir: temp('native-cache') });
    expect(bundles.client).toBe('h2');
    expect(bundles.worker).toMatch(/load-worker-worker-main-h2-[0-9a-f]{12}\.cjs$/);
    expect(bundles.fallback).toMatch(/^client native unavailable, running h2 workers instead: no C compiler/);
  });

  it('a compiler that does not run, or does not compile, is a reason too', async () => {
    const bin = temp('bad-cc');
    writeFileSync(join(bin, 'cc'), '#!/bin/sh\nexit 3\n');
    chmodSync(join(bin, 'cc'), 0o755);
    const broken = await buildNativeWorker({ env: { PATH: `${bin}:/usr/bin:/bin` }, cacheDir: temp('native-cache') });
    expect(broken).toMatchObject({ ok: false });
    if (!broken.ok) expect(broken.reason).toContain(`the C compiler ${join(bin, 'cc')} does not run`);

    const bin2 = temp('failing-cc');
    writeFileSync(join(bin2, 'cc'), '#!/bin/sh\nif [ "$1" = --version ]; then echo "fake cc 1.0"; exit 0; fi\necho "error: no" >&2\nexit 1\n');
    chmodSync(join(bin2, 'cc'), 0o755);
    const failing = await buildNativeWorker({ env: { PATH: `${bin2}:/usr/bin:/bin` }, cacheDir: temp('native-cache') });
    expect(failing).toMatchObject({ ok: false });
    if (!failing.ok) expect(failing.reason).toMatch(/did not compile with .*fake cc 1\.0 \(static: error: no; dynamic: error: no\)/);
  });

  it('CC names the compiler, as make does', async (ctx) => {
    if (!hasCc) return ctx.skip();
    const bin = temp('cc-wrapper');
    mkdirSync(bin, { recursive: true });
    const real = findExecutable('cc', process.env)!;
    writeFileSync(join(bin, 'my-cc'), `#!/bin/sh\nexec ${real} "$@"\n`);
    chmodSync(join(bin, 'my-cc'), 0o755);
    const built = await buildNativeWorker({ env: { ...process.env, CC: 'my-cc', PATH: `${bin}:${process.env.PATH}` }, cacheDir: temp('native-cache') });
    expect(built).toMatchObject({ ok: true });
    if (built.ok) expect(built.compiler.startsWith(join(bin, 'my-cc'))).toBe(true);
  });
});

/** Whether an ELF64 little-endian executable asks for a dynamic loader (has a PT_INTERP program header). */
function hasInterpreter(file: string): boolean {
  const b = readFileSync(file);
  expect(b.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3) return true;
  return false;
}

describe('native worker built ahead of time (the project image carries one and no compiler)', () => {
  it('is compiled statically under a key of its sources, and taken where no compiler is: client native runs native', async (ctx) => {
    if (!hasCc) return (skipNote('native worker built ahead of time', 'no cc in PATH'), ctx.skip());
    const sourceDir = temp('native-src');
    cpSync(NATIVE_SOURCE_DIR, sourceDir, { recursive: true });
    const out = temp('native-prebuilt');
    const binary = await prebuildNativeWorker(out, { sourceDir });
    expect(binary).toMatch(new RegExp(`^${out}/${NATIVE_BINARY_PREFIX}[0-9a-f]{12}$`));
    // Nothing but the binary and the record of how it was built (no build leftovers).
    expect(readdirSync(out).sort()).toEqual([binary.split('/').pop(), `${binary.split('/').pop()}.json`]);
    expect(JSON.parse(readFileSync(`${binary}.json`, 'utf8'))).toMatchObject({ linkage: 'static', compiler: expect.stringMatching(/^\/.*cc/) });
    expect(hasInterpreter(binary)).toBe(false);
    expect(hasInterpreter(process.execPath)).toBe(true);

    const noCc = { PATH: temp('no-cc') };
    const taken = await buildNativeWorker({ env: noCc, cacheDir: temp('native-cache'), sourceDir, prebuiltDir: out });
    expect(taken).toMatchObject({ ok: true, binary, linkage: 'static', cached: true });
    const bundles = await loadNativeBundles({ env: noCc, cacheDir: temp('native-cache'), sourceDir, prebuiltDir: out });
    expect(bundles).toMatchObject({ client: 'native', worker: binary });
    expect(bundles.fallback).toBeUndefined();

    // Built for other sources it is not taken: without a compiler, native falls back again.
    appendFileSync(join(sourceDir, 'main.c'), '\n/* changed */\n');
    const stale = await buildNativeWorker({ env: noCc, cacheDir: temp('native-cache'), sourceDir, prebuiltDir: out });
    expect(stale).toMatchObject({ ok: false });
    if (!stale.ok) expect(stale.reason).toMatch(/^no C compiler/);
  });

  it('refuses to make a dynamically linked one, and says what to install', async (ctx) => {
    if (!hasCc) return ctx.skip();
    const bin = temp('no-static-cc');
    const real = findExecutable('cc', process.env)!;
    writeFileSync(join(bin, 'cc'), `#!/bin/sh\ncase " $* " in *" -static "*) echo "cannot find -lc" >&2; exit 1;; esac\nexec ${real} "$@"\n`);
    chmodSync(join(bin, 'cc'), 0o755);
    const out = temp('native-prebuilt');
    await expect(prebuildNativeWorker(out, { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } })).rejects.toThrow(
      /linked only dynamically with .*: install the C library's static archive \(Debian: libc6-dev\)/,
    );
    expect(readdirSync(out)).toEqual([]);
  });
});

describe('native worker command line', () => {
  it('carries every worker setting as key=value', () => {
    expect(
      nativeWorkerArgs({
        socket: '/tmp/a b/agent.sock',
        client: 'native',
        connection: 'per-retry',
        rate: 2.5,
        deadlineMs: 300,
        retry: 'backoff',
        methods: [
          ['FetchJWTSVID', 9],
          ['ValidateJWTSVID', 1],
        ],
        audience: 'x=y',
        maxCalls: null,
      }),
    ).toEqual([
      'socket=/tmp/a b/agent.sock',
      'connection=per-retry',
      'rate=2.5',
      'deadlineMs=300',
      'retry=backoff',
      'audience=x=y',
      'maxCalls=-1',
      'method=FetchJWTSVID:9',
      'method=ValidateJWTSVID:1',
    ]);
  });
});

describe('native worker encodings', () => {
  it("its histograms decode in hdr-histogram-js to what the Node workers' record", (ctx) => {
    if (!hasCc) return ctx.skip();
    const values = [1, 2, 5, 999, 1000, 2047, 2048, 2049, 4095, 65_537, 1_234_567, 30_000_000, 30_000_000, 86_400_000_000];
    const encoded = execFileSync(binary, ['--encode-histogram', ...values.map(String)], { encoding: 'utf8' }).trim();
    const native = decodeHistogram(encoded);
    const js = new LatencyHistogram();
    for (const v of values) js.recordValue(v);
    const reference = decodeHistogram(js.encodeIntoCompressedBase64());
    expect(native.totalCount).toBe(values.length);
    expect(native.maxValue).toBe(reference.maxValue);
    expect(native.minNonZeroValue).toBe(reference.minNonZeroValue);
    for (const p of [1, 10, 25, 50, 75, 90, 99, 99.9, 100]) expect(native.getValueAtPercentile(p), `p${p}`).toBe(reference.getValueAtPercentile(p));
    native.destroy();
    reference.destroy();
  });

  it('decodes HPACK Huffman strings (RFC 7541 C.4, C.6) and refuses bad padding', (ctx) => {
    if (!hasCc) return ctx.skip();
    const decode = (hex: string) => spawnSync(binary, ['--decode-huffman', hex], { encoding: 'utf8' });
    const cases: Array<[string, string]> = [
      ['f1e3c2e5f23a6ba0ab90f4ff', 'www.example.com'],
      ['a8eb10649cbf', 'no-cache'],
      ['25a849e95bb8e8b4bf', 'custom-value'],
      ['6402', '302'],
      ['aec3771a4b', 'private'],
      ['d07abe941054d444a8200595040b8166e082a62d1bff', 'Mon, 21 Oct 2013 20:13:21 GMT'],
      ['9d29ad171863c78f0b97c8e9ae82ae43d3', 'https://www.example.com'],
      [
        '94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007',
        'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1',
      ],
    ];
    for (const [hex, text] of cases) expect(decode(hex).stdout, hex).toBe(`${text}\n`);
    // Padding of 8 bits or more, or not all ones, is a decoding error.
    expect(decode('f1e3c2e5f23a6ba0ab90f4ffff').status).toBe(1);
    expect(decode('60').status).toBe(1); // '/' then two zero bits
  });
});
