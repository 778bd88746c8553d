// The lint rule that keeps a test from passing without testing: a `return` in an it/test body
// before its assertions is reported; skipping with ctx.skip() and returning the test's promise are not.
import { RuleTester } from 'eslint';
import { describe, it } from 'vitest';
import rule from '../../eslint-rules/no-early-return-in-test.js';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } }).run('no-early-return-in-test', rule, {
  valid: [
    "it('a', () => { expect(1).toBe(1); });",
    "it.skipIf(!root)('b', () => { expect(f()).toBe(1); });",
    "it('c', async (ctx) => { if (!cc) return ctx.skip(); expect(1).toBe(1); });",
    "it('d', (ctx) => { if (!cc) return (note('x', 'y'), ctx.skip()); expect(1).toBe(1); });",
    "it('e', () => { const xs = [1].map((x) => { return x; }); expect(xs).toEqual([1]); });",
    "test('f', () => { return expect(p).resolves.toBe(1); });",
    "describe('g', () => { if (x) return; });",
  ],
  invalid: [
    { code: "it('a', () => { if (isRoot) return; expect(1).toBe(1); });", errors: [{ messageId: 'early' }] },
    { code: "it.skipIf(x)('b', async () => { for (const f of fs) { if (!f) return; } expect(1).toBe(1); });", errors: [{ messageId: 'early' }] },
    { code: "test.each([1])('c', (n) => { if (n) { return; } expect(n).toBe(1); });", errors: [{ messageId: 'early' }] },
    { code: "it('d', () => { expect(1).toBe(1); return; });", errors: [{ messageId: 'early' }] },
  ],
});
