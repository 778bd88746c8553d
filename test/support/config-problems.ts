// The problems a ConfigError lists when `run` rejects its input; a test fails when nothing is thrown
// or something else is.
import { expect } from 'vitest';
import { ConfigError } from '../../src/errors.js';

export function configProblems(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}
