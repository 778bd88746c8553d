// Types of the rule for the test that runs it through ESLint's RuleTester.
import type { Rule } from 'eslint';

declare const rule: Rule.RuleModule;
export default rule;
