// Runs one job in a guest by hand: `npx tsx test/vm/run-job.ts <flavour> <placement> <script.sh | -c 'command'>`.
// Prints the job's stdout and stderr, then its exit code, boot time and the files it wrote.
import { readFileSync } from 'node:fs';
import { bootGuest, type Flavour, type Placement } from './guest.js';

const [flavour, placement, ...rest] = process.argv.slice(2);
if (!flavour || !placement || rest.length === 0) {
  process.stderr.write("usage: npx tsx test/vm/run-job.ts minimal|systemd <placement> <script.sh | -c 'command'>\n");
  process.exit(2);
}
const job = rest[0] === '-c' ? rest.slice(1).join(' ') : readFileSync(rest[0]!, 'utf8');
const timeoutMs = Number(process.env.ATTESTORM_VM_TIMEOUT_MS ?? 600_000);
const r = await bootGuest({ flavour: flavour as Flavour, placement: placement as Placement, job, timeoutMs });
process.stdout.write(r.stdout);
process.stderr.write(r.stderr);
if (r.exitCode === null) process.stderr.write(`--- console (last 40 lines) ---\n${r.console.split('\n').slice(-40).join('\n')}\n`);
process.stderr.write(
  `--- exit ${r.exitCode ?? 'none'}${r.timedOut ? ' (timed out)' : ''}, job started ${r.bootSeconds ?? '-'} s after QEMU, files: ${Object.keys(r.files).join(', ') || 'none'}\n`,
);
process.exitCode = r.exitCode ?? 1;
