// Where a command that renders text (`export`, `comment`) puts it: the --out file, named on stderr,
// or stdout.
import { writeFile } from 'node:fs/promises';
import { AttestormError } from '../errors.js';

/** Writes to stdout; a reader that stops early (`| head`) ends the output, not the command. */
function toStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // Kept on: the stream reports a closed pipe again after the write's callback.
    process.stdout.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? resolve() : reject(err)));
    process.stdout.write(text, (err) => {
      if (err && (err as NodeJS.ErrnoException).code !== 'EPIPE') reject(err);
      else resolve();
    });
  });
}

export async function writeOutput(text: string, out: string | undefined): Promise<void> {
  if (out === undefined) return toStdout(text);
  try {
    await writeFile(out, text);
  } catch (err) {
    throw new AttestormError('ATTESTORM_ERR_IO', `cannot write ${out}: ${(err as Error).message}`, { cause: err });
  }
  process.stderr.write(`${out}\n`);
}
