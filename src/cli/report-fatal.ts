// How the CLI ends on an error: a message naming the input and the rule, and the documented exit status.
import { AttestormError, ConfigError, exitCodeFor, PreflightError } from '../errors.js';

export function reportFatal(err: unknown): number {
  // Their messages name every problem (a preflight's each with its code).
  if (err instanceof ConfigError || err instanceof PreflightError) {
    process.stderr.write(`attestorm: ${err.message}\n`);
  } else if (err instanceof AttestormError) {
    process.stderr.write(`attestorm: ${err.message} [${err.code}]\n`);
  } else {
    process.stderr.write(`attestorm: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  }
  return exitCodeFor(err);
}
