// Every problem of every flag and file at once, before anything starts: checks run through
// collect(), their ConfigErrors gathered, one ConfigError thrown at the end (exit 2).
import { ConfigError } from '../errors.js';

export class Problems {
  readonly list: string[] = [];

  /** Runs a check; its ConfigError's problems are kept (undefined returned), anything else is thrown. */
  collect<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.list.push(...err.problems);
      return undefined;
    }
  }

  add(...problems: string[]): void {
    this.list.push(...problems);
  }

  /** Throws every problem found so far as one ConfigError. */
  throwIfAny(): void {
    if (this.list.length) throw new ConfigError(this.list);
  }
}
