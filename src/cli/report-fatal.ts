// How the CLI ends on an error: a message naming the input and the rule, and the documented exit status.
import { AttestormError, ConfigError, exitCodeFor } from '../errors.js';

export function reportFatal(err: unknown): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`attestorm: ${err.message}\n`);
  } else if (err instanceof AttestormError) {
    process.stderr.write(`attestorm: ${err.message} [${err.code}]\n`);
  } else {
    process.stderr.write(`attestorm: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  }
  return exitCodeFor(err);
}
