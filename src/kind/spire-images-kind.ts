// SPIRE images from the user's own binaries on kind: made as for the local cluster (spire-server and
// spire-agent on the Node base, cached as OCI archives keyed by both binaries), turned into docker
// archives and loaded into every node with `kind load image-archive`, so a kind cluster that cannot
// pull ghcr.io runs the build the user names.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PlatformError } from '../errors.js';
import { clusterLayout, spireArchive, spireBuild, spireImageRefs, type SpireImagePair } from '../local-cluster/index.js';
import { runTool } from './kind-cli.js';
import { ensureKindBinary } from './kind-binary.js';
import type { KindLayout } from './layout.js';
import { dockerArchiveFrom, engineForKind } from './kind-up.js';

/** The SPIRE images of the build in `dir`, loaded into every node of kind cluster `name`; the names the manifests use. */
export async function loadSpireImagesIntoKind(l: KindLayout, name: string, dir: string, log: (s: string) => void): Promise<SpireImagePair> {
  const env = await engineForKind(l);
  const kind = await ensureKindBinary(l, log);
  const b = await spireBuild(dir);
  const refs = spireImageRefs(b);
  for (const [binary, ref] of [
    ['spire-server', refs.serverImage],
    ['spire-agent', refs.agentImage],
  ] as const) {
    const out = join(l.partsDir, `${binary}-${b.key}.docker.tar`);
    // Archives of earlier builds of the same binary are keyed by content and never reused.
    if (!existsSync(out))
      await dockerArchiveFrom(await spireArchive(clusterLayout(), b, binary, ref, log), ref, out, new RegExp(`^${binary}-[0-9a-f]{12}\\.docker\\.tar$`));
    const r = await runTool(kind, ['load', 'image-archive', out, '--name', name], { hint: '', env });
    if (r.code !== 0) throw new PlatformError(`kind load image-archive ${out} --name ${name} failed (exit ${r.code}): ${r.stderr.trim()}`);
    log(`loaded ${ref} (${b.version}, from ${join(b.dir, binary)}) into every node of kind ${name}`);
  }
  return refs;
}
