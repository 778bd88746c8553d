// The kind CLI: the one on PATH (the user's choice, whatever its version), otherwise kind
// KIND_VERSIONS.kind built from its Go module (sigs.k8s.io/kind, through the Go module proxy) into
// the cache.
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { COLD_SECONDS, goEnv, onPath, sh, timedStep } from '../local-cluster/index.js';
import { KIND_VERSIONS, type KindLayout } from './layout.js';

async function versionOf(bin: string): Promise<string | null> {
  const r = await sh(bin, ['version'], { allowFail: true }).catch(() => null);
  return r && r.code === 0 ? (/kind (v\S+)/.exec(r.stdout)?.[1] ?? null) : null;
}

/** Path of a kind binary; builds KIND_VERSIONS.kind (about 10 s warm, a minute cold) when neither PATH nor the cache has one. */
export async function ensureKindBinary(l: KindLayout, log: (s: string) => void): Promise<string> {
  if (onPath('kind')) {
    const version = await versionOf('kind');
    if (version !== KIND_VERSIONS.kind)
      log(`using kind ${version ?? '(version unknown)'} from PATH (the local node image is made for kind ${KIND_VERSIONS.kind})`);
    return 'kind';
  }
  if (existsSync(l.kindBin)) return l.kindBin;
  const dir = dirname(l.kindBin);
  const gobin = join(dir, 'gobin');
  mkdirSync(gobin, { recursive: true });
  await timedStep(log, { what: `kind ${KIND_VERSIONS.kind} from sigs.k8s.io/kind`, seconds: COLD_SECONDS.kind }, async () => {
    await sh('nice', ['-n', '10', 'go', 'install', `sigs.k8s.io/kind@${KIND_VERSIONS.kind}`], { env: { ...goEnv(), GOFLAGS: '', GOBIN: gobin } });
    renameSync(join(gobin, 'kind'), l.kindBin);
  });
  return l.kindBin;
}
