// action.yml's run steps executed as the runner executes them: `bash --noprofile --norc -eo pipefail`
// on the script, inputs through the step's env with ${{ … }} replaced by the values given, and
// GITHUB_OUTPUT a file read back afterwards.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../src/util/index.js';

export interface ActionStep {
  name: string;
  id?: string;
  if?: string;
  shell?: string;
  run?: string;
  env?: Record<string, string>;
  'working-directory'?: string;
}

export const ACTION_FILE = 'action.yml';
export const actionText = readFileSync(join(PROJECT_ROOT, ACTION_FILE), 'utf8');
export const action = parse(actionText) as {
  inputs: Record<string, { description: string; required?: boolean; default?: string }>;
  outputs: Record<string, { description: string; value: string }>;
  runs: { using: string; steps: ActionStep[] };
};

export function actionStep(name: string): ActionStep {
  const step = action.runs.steps.find((s) => s.name === name);
  if (!step) throw new Error(`${ACTION_FILE} has no step named ${JSON.stringify(name)}`);
  return step;
}

/** ${{ inputs.x }}, ${{ steps.id.outputs.x }} and ${{ github.action_path }} in a step's env, as the runner fills them in. */
function expand(value: string, inputs: Record<string, string>, stepOutputs: Record<string, string>): string {
  return value.replace(/\$\{\{\s*([\w.-]+)\s*\}\}/g, (_, expr: string) => {
    if (expr === 'github.action_path') return PROJECT_ROOT.replace(/\/$/, '');
    if (expr.startsWith('inputs.')) return inputs[expr.slice('inputs.'.length)] ?? action.inputs[expr.slice('inputs.'.length)]?.default ?? '';
    // An earlier step's output that was never set reads as empty, as on a runner.
    if (expr.startsWith('steps.')) return stepOutputs[expr.slice('steps.'.length)] ?? '';
    throw new Error(`${ACTION_FILE}: no test value for \${{ ${expr} }}`);
  });
}

/** `opts.stepOutputs` holds earlier steps' outputs by `<id>.outputs.<name>`. */
export function runActionStep(
  name: string,
  inputs: Record<string, string>,
  opts: { cwd: string; env?: Record<string, string>; timeout?: number; stepOutputs?: Record<string, string> },
) {
  const step = actionStep(name);
  const dir = mkdtempSync(join(tmpdir(), 'attestorm-action-'));
  const script = join(dir, 'step.sh');
  const output = join(dir, 'github-output');
  writeFileSync(script, step.run!);
  writeFileSync(output, '');
  const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(v, inputs, opts.stepOutputs ?? {})]));
  const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
    cwd: opts.cwd,
    encoding: 'utf8',
    timeout: opts.timeout ?? 60_000,
    env: { ...process.env, RUNNER_TEMP: dir, GITHUB_OUTPUT: output, ...opts.env, ...stepEnv },
  });
  const outputs = Object.fromEntries(
    readFileSync(output, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, outputs, tempDir: dir };
}
