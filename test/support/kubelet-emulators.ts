// Kubelet emulators a test starts, each closed after the test that started it.
import { afterEach } from 'vitest';
import { startKubeletEmulator, type KubeletEmulator } from '../../src/sandbox/index.js';

export function useKubeletEmulators(): (opts: Parameters<typeof startKubeletEmulator>[0]) => Promise<KubeletEmulator> {
  const open: KubeletEmulator[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((k) => k.close()));
  });
  return async (opts) => {
    const k = await startKubeletEmulator(opts);
    open.push(k);
    return k;
  };
}
