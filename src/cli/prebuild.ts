// `npm pack` runs this first (prepack): the CLI's two entries and every child process's entry,
// bundled into dist/ with the options a checkout bundles them with. The package ships no TypeScript,
// so it runs these and needs neither esbuild nor a writable install folder to start.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LOAD_BUNDLES } from '../load/index.js';
import { SVID_PROBE_BUNDLE } from '../spire/index.js';
import { REFERENCE_AGENT_BUNDLE } from '../targets/index.js';
import { prebuildBundle, prebuildCliBundle, PREBUILT_DIR, PROJECT_ROOT } from '../util/index.js';

const dist = join(PROJECT_ROOT, PREBUILT_DIR);
rmSync(dist, { recursive: true, force: true });
const built = [await prebuildCliBundle('main', dist), await prebuildCliBundle('agent-main', dist)];
for (const spec of [REFERENCE_AGENT_BUNDLE, SVID_PROBE_BUNDLE, ...LOAD_BUNDLES]) built.push(await prebuildBundle(spec, dist));
process.stdout.write(`prebuilt ${built.length} bundles into ${PREBUILT_DIR}/\n`);
