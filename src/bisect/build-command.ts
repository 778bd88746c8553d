// --build '<command>': the user's build of any agent, run by sh in the commit's work tree with
// ATTESTORM_BIN_DIR naming the folder to fill (and ATTESTORM_COMMIT the commit).
import { readdirSync } from 'node:fs';
import { lastLines, type BuildContext, type BuildOutcome, type Builder } from './builder.js';
import { runBuild } from './build-process.js';

export function commandBuilder(command: string): Builder {
  return {
    kind: 'command',
    describe: `sh -c ${JSON.stringify(command)}`,
    problems: async () => [],
    async build(ctx: BuildContext): Promise<BuildOutcome> {
      const r = await runBuild({
        argv: ['sh', '-c', command],
        cwd: ctx.workTree,
        env: { ...process.env, ATTESTORM_BIN_DIR: ctx.binDir, ATTESTORM_COMMIT: ctx.commit },
        logFile: ctx.logFile,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      if (r.code !== 0) return { ok: false, reason: `the build command failed (exit ${r.code}): ${lastLines(r.output) || 'no output'}`, replaced: [] };
      if (readdirSync(ctx.binDir).length === 0) return { ok: false, reason: 'the build command succeeded but left $ATTESTORM_BIN_DIR empty', replaced: [] };
      return { ok: true, replaced: [] };
    },
  };
}
