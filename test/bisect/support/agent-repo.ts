// A synthetic agent history for bisect tests: a linear git repository whose build.sh fills
// $ATTESTORM_BIN_DIR with an attestorm-agent wrapper of the project's reference agent. Up to the
// first bad commit the wrapper runs the agent as configured (its limiter before attestation); from
// it on, it rewrites the agent's configuration to have no limiter — the regression a bisect must
// find. Commits listed as broken have a build that fails. Dates are fixed, so the history is the
// same on every machine.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface AgentRepo {
  dir: string;
  /** commits[0] is the good end, the last the bad end. */
  commits: string[];
}

export const BUILD_COMMAND = 'sh build.sh';

const GOOD_AGENT = `#!/bin/sh
exec "$ATTESTORM_NODE" "$ATTESTORM_AGENT_BUNDLE" "$@"
`;

// The regression: the limiter taken out (placement disabled; a disabled limiter has no key).
const BAD_AGENT = `#!/bin/sh
sed -e 's/^\\( *placement:\\).*/\\1 disabled/' -e '/^  key:/d' "$1" > "$1.as-built.yaml"
exec "$ATTESTORM_NODE" "$ATTESTORM_AGENT_BUNDLE" "$1.as-built.yaml"
`;

function buildScript(agent: string): string {
  return `#!/bin/sh
set -e
cat > "$ATTESTORM_BIN_DIR/attestorm-agent" <<'AGENT'
${agent}AGENT
chmod +x "$ATTESTORM_BIN_DIR/attestorm-agent"
`;
}

const BROKEN = `#!/bin/sh
echo 'agent.c:1: error: this commit does not build' >&2
exit 1
`;

export function subjectOf(i: number, firstBad: number, broken: readonly number[]): string {
  if (i === 0) return 'agent: a wrapper of the reference agent';
  if (i === firstBad) return 'agent: attest before asking the limiter';
  if (broken.includes(i)) return `agent: change ${i} (does not build)`;
  return `agent: change ${i}`;
}

/** Commits 0..count-1; from `firstBad` on the agent has no limiter; `broken` ones do not build. */
export function makeAgentRepo(dir: string, count: number, firstBad: number, broken: readonly number[] = []): AgentRepo {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  git('init', '--quiet', '--initial-branch=main');
  const commits: string[] = [];
  for (let i = 0; i < count; i++) {
    writeFileSync(join(dir, 'build.sh'), broken.includes(i) ? BROKEN : buildScript(i >= firstBad ? BAD_AGENT : GOOD_AGENT));
    writeFileSync(join(dir, 'CHANGES'), `${Array.from({ length: i + 1 }, (_, k) => `change ${k}`).join('\n')}\n`);
    git('add', '-A');
    const date = `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`;
    execFileSync('git', ['commit', '--quiet', '-m', subjectOf(i, firstBad, broken)], {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'a',
        GIT_AUTHOR_EMAIL: 'a@example.org',
        GIT_COMMITTER_NAME: 'a',
        GIT_COMMITTER_EMAIL: 'a@example.org',
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_DATE: date,
      },
    });
    commits.push(git('rev-parse', 'HEAD'));
  }
  return { dir, commits };
}

/** The index of the commit git bisect tests first between commits[0] (good) and the last (bad). */
export function firstProbe(repo: AgentRepo): number {
  const sha = execFileSync('git', ['rev-list', '--bisect', repo.commits.at(-1)!, `^${repo.commits[0]}`], { cwd: repo.dir, encoding: 'utf8' }).trim();
  return repo.commits.indexOf(sha);
}
