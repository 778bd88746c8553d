// ESLint: the recommended JavaScript and type-checked TypeScript rules (floating and misused
// promises need the types), with the few that fight this code's deliberate habits turned off.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import noEarlyReturnInTest from './eslint-rules/no-early-return-in-test.js';

export default defineConfig(
  globalIgnores(['src/proto/gen/', 'manifests/', 'reports/', 'test-artifacts/', 'dist/']),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A leading underscore marks a binding unused on purpose (an omitted key, a type parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Functions that implement a Promise-returning interface are async so that a throw is a rejection.
      '@typescript-eslint/require-await': 'off',
      // Interfaces declare callbacks in method shorthand; they are closures that never use `this`.
      '@typescript-eslint/unbound-method': 'off',
      // The assertions it calls unnecessary say what a value is to the reader or steer a generic; dropping them fixes nothing.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // `never` in a message is a value from disk that the types rule out: the message is for when they are wrong.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNever: true }],
      // A caught value passed on as it came (an event's error, an AbortSignal's reason) is not a new non-Error.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Its findings are String() of `unknown` narrowed to a primitive (TypeScript still says `{}`); objects in messages are restrict-template-expressions' catch.
      '@typescript-eslint/no-base-to-string': 'off',
      // Promise.all over children that may be absent (`child ? stopChild(child) : undefined`) waits for those present.
      '@typescript-eslint/await-thenable': ['error', { allowMixedPromiseArrays: true }],
    },
  },
  {
    files: ['test/**'],
    // The project's own rule: a test that can return before its assertions would pass without testing.
    plugins: { attestorm: { rules: { 'no-early-return-in-test': noEarlyReturnInTest } } },
    rules: {
      'attestorm/no-early-return-in-test': 'error',
      // Tests read JSON, YAML and rendered Kubernetes documents as `any` on purpose: the assertions are the check.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript (the CLI's launcher, the bundler, test fixtures run as child processes): no types to check.
    files: ['**/*.{js,mjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
);
