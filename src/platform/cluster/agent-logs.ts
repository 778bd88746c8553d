// The agent's logs saved into the run folder: the current container's, and for a container that
// was killed the previous one's (`previous: true`), which is where an OOM-killed agent's last
// words are.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

export async function saveLogs(
  kc: KubeConfig,
  namespace: string,
  pod: string,
  container: string,
  dir: string,
  opts: { previous: boolean; prefix?: string },
): Promise<string[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const written: string[] = [];
  const prefix = opts.prefix ?? container;
  for (const previous of opts.previous ? [true, false] : [false]) {
    const file = join(dir, `${prefix}${previous ? '.previous' : ''}.log`);
    try {
      const text = await core.readNamespacedPodLog({ name: pod, namespace, container, previous });
      writeFileSync(file, text);
    } catch (err) {
      writeFileSync(file, `# attestorm: could not read the ${previous ? 'previous ' : ''}log of ${namespace}/${pod}/${container}: ${(err as Error).message}\n`);
    }
    written.push(file);
  }
  return written;
}
