// The project's image runs this at build time (Dockerfile): the native load worker compiled with the
// runner's own flags, linked statically, into dist/native — the image carries no C compiler, and
// without the binary a generator pod asked for client native would run h2 workers instead.
import { prebuildNativeWorker } from '../load/index.js';

const binary = await prebuildNativeWorker();
process.stdout.write(`prebuilt the native load worker: ${binary}\n`);
