// The flags `bisect` and `bisect-step` share — what one step builds and runs — declared once so
// that the two commands say the same and a step under `git bisect run` is the step `bisect` makes.
import type { Options } from 'yargs';
import { overrideKeys } from '../scenario/index.js';

export interface StepArgs {
  scenario?: string;
  variant?: string;
  repetitions?: number;
  duration?: string;
  set?: string[];
  build?: string;
  replace?: string[];
  goCache?: string;
}

export const STEP_OPTIONS = {
  variant: {
    type: 'string',
    describe:
      "The scenario's variant each step runs on the build (as its agent.binDir) and is judged by: passed is good, failed bad, inconclusive skipped. Default: the scenario's only variant",
  },
  repetitions: {
    type: 'number',
    describe:
      "Runs of the variant per step (the scenario's repetitions); the variant's verdict over all of them marks the step (OOM kills are summed: one killed repetition fails oomKilled: false; peaks are medians). Default: the scenario's",
  },
  duration: { type: 'string', describe: `${overrideKeys.duration.description} (e.g. 60s). Default: the scenario's` },
  set: {
    type: 'string',
    array: true,
    describe: 'Set a scenario key before it is checked, as `run --set` does (e.g. expect.v1-15-3.oomKilled=false); repeatable',
  },
  build: {
    type: 'string',
    describe:
      "Build command run by sh in the commit's work tree with $ATTESTORM_BIN_DIR (the folder to fill) and $ATTESTORM_COMMIT: for agents other than SPIRE, or SPIRE built another way. Exit 0 with the folder filled: built; otherwise the commit is skipped. Default: SPIRE's build (CGO_ENABLED=1 GOTOOLCHAIN=local go build ./cmd/spire-server ./cmd/spire-agent)",
  },
  replace: {
    type: 'string',
    array: true,
    describe:
      "SPIRE's build: a go.mod replacement, <module>[@<version>]=<folder or module@version>, for a module version the Go module proxy refuses (others are replaced by the nearest version it serves, automatically); repeatable",
  },
  'go-cache': { type: 'string', describe: "SPIRE's build: GOCACHE and GOMODCACHE under this folder. Default: Go's own (go env GOCACHE, GOMODCACHE)" },
} as const satisfies Record<string, Options>;
