// `npm run bench`: runs each benchmark in its own process (so one's heap and sockets cannot skew
// another's numbers) and prints what each measured. Numbers, never pass/fail.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benches: Array<{ file: string; nodeArgs: string[] }> = [
  { file: 'limiter.ts', nodeArgs: ['--expose-gc'] },
  { file: 'agent.ts', nodeArgs: [] },
  { file: 'load.ts', nodeArgs: [] },
];

const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
let failed = 0;
for (const { file, nodeArgs } of benches) {
  if (only.length && !only.some((o) => file.startsWith(o))) continue;
  const path = fileURLToPath(new URL(file, import.meta.url));
  process.stdout.write(`\n== bench/${file} ==\n`);
  const res = spawnSync(process.execPath, [...nodeArgs, '--import', 'tsx', path], { stdio: 'inherit' });
  if (res.status !== 0) {
    failed++;
    process.stdout.write(`bench/${file} exited with ${res.status ?? res.signal}\n`);
  }
}
process.exitCode = failed ? 1 : 0;
