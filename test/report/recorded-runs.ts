// Test helper: real run folders, recorded by `attestorm stability scenarios/quick.yaml` (the default
// scenario, four variants, one with a 1 GiB limit) and kept under fixtures/ with their samples gzipped.
// copyRecordedRun unpacks one into a folder of its own, so a test can render into it.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** quick-all-met: every expectation met, the 1 GiB variant peaked at 577 MiB. quick-one-failed: one failed, two inconclusive, every peak under 125 MiB. */
export const RECORDED_RUNS = ['quick-all-met', 'quick-one-failed'] as const;
export type RecordedRun = (typeof RECORDED_RUNS)[number];

export async function copyRecordedRun(name: RecordedRun, parent: string): Promise<string> {
  const from = path.join(FIXTURES, name);
  const to = path.join(parent, name);
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (entry.isFile()) {
      await writeFile(path.join(to, entry.name), await readFile(path.join(from, entry.name)));
      continue;
    }
    await mkdir(path.join(to, entry.name));
    for (const file of await readdir(path.join(from, entry.name))) {
      const data = await readFile(path.join(from, entry.name, file));
      const plain = file.endsWith('.gz');
      await writeFile(path.join(to, entry.name, plain ? file.slice(0, -3) : file), plain ? gunzipSync(data) : data);
    }
  }
  return to;
}
