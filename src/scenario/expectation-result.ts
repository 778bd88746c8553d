// One rule's result, as the expectations and their preconditions write it.
import type { ExpectationResult, Verdict } from '../contract/index.js';

export const rps = (n: number) => `${n.toFixed(1)}/s`;

export function result(
  name: string,
  expected: unknown,
  actual: unknown,
  verdict: Verdict,
  basis: ExpectationResult['basis'],
  message: string,
): ExpectationResult {
  return { name, expected, actual, verdict, basis, message };
}
