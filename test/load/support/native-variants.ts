// Test builds of the native worker beside the real one (whose flags build.ts keeps): one with
// AddressSanitizer and UBSan, one whose own mallocs can be made to fail (fail-malloc.c). Each first
// probes that the compiler and the machine support it and, when they do not, says why instead.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NATIVE_BASE_FLAGS, findExecutable, nativeSources } from '../../../src/load/native/build.js';

const run = promisify(execFile);

export type Variant = { ok: true; binary: string } | { ok: false; reason: string };

/** -fno-sanitize-recover: a UBSan finding ends the worker, so a test cannot miss it in passing. */
export const SANITIZER_FLAGS = ['-fsanitize=address,undefined', '-fno-omit-frame-pointer', '-fno-sanitize-recover=all'];
/** Sanitizer reports go to stderr; the worker exits non-zero after one. */
export const SANITIZER_ENV = { ASAN_OPTIONS: 'abort_on_error=0:halt_on_error=1:detect_leaks=1', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' };

function compiler(): string | null {
  return findExecutable(process.env.CC?.trim() || 'cc', process.env);
}

async function compile(cc: string, args: string[]): Promise<string | null> {
  try {
    await run(cc, args, { timeout: 120_000 });
    return null;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return (e.stderr || e.message).trim().split('\n').slice(0, 2).join(' / ');
  }
}

/** The worker built with ASan and UBSan, if a probe program built with them runs here. */
export async function buildSanitizedWorker(dir: string): Promise<Variant> {
  const cc = compiler();
  if (!cc) return { ok: false, reason: 'no C compiler in PATH' };
  const probe = join(dir, 'probe.c');
  writeFileSync(probe, 'int main(void) { return 0; }\n');
  const probeBin = join(dir, 'probe');
  const probeErr = await compile(cc, [...SANITIZER_FLAGS, '-o', probeBin, probe]);
  if (probeErr) return { ok: false, reason: `${cc} does not build with ${SANITIZER_FLAGS.join(' ')}: ${probeErr}` };
  try {
    await run(probeBin, [], { env: { ...process.env, ...SANITIZER_ENV }, timeout: 30_000 });
  } catch (err) {
    return { ok: false, reason: `a program built with ${SANITIZER_FLAGS[0]} does not run here: ${(err as Error).message.split('\n')[0]}` };
  }
  const binary = join(dir, 'worker-sanitized');
  const err = await compile(cc, [...NATIVE_BASE_FLAGS, ...SANITIZER_FLAGS, '-o', binary, ...nativeSources().filter((s) => s.endsWith('.c')), '-lm']);
  return err ? { ok: false, reason: `the worker did not build with sanitizers: ${err}` } : { ok: true, binary };
}

/** The worker with its mallocs redirected to fail-malloc.c (GNU ld's --wrap). */
export async function buildFailingMallocWorker(dir: string): Promise<Variant> {
  const cc = compiler();
  if (!cc) return { ok: false, reason: 'no C compiler in PATH' };
  const binary = join(dir, 'worker-failing-malloc');
  const shim = join(import.meta.dirname, 'fail-malloc.c');
  const err = await compile(cc, [...NATIVE_BASE_FLAGS, '-Wl,--wrap=malloc', '-o', binary, ...nativeSources().filter((s) => s.endsWith('.c')), shim, '-lm']);
  return err ? { ok: false, reason: `the linker does not take -Wl,--wrap=malloc: ${err}` } : { ok: true, binary };
}
