// Teardown and cleanup against the FAKE API server (test/kube/fake-apiserver.ts): a delete the API
// server refuses for any reason but 404 (already gone) fails the call that asked for it, rather than
// escaping as an unhandled rejection.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupCluster, teardownVariant } from '../../src/platform/cluster/index.js';
import { MANAGED_BY, MANAGER } from '../../src/kube/index.js';
import { FakeApiServer } from './fake-apiserver.js';
import { fakeKubeConfig } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-kube-teardown-'));
let fake: FakeApiServer | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function start(refuseDeletes: Record<string, number>, objects: Array<{ path: string; kind: string; name: string }>) {
  fake = await new FakeApiServer({ refuseDeletes }).start();
  for (const o of objects) fake.objects.set(o.path, { kind: o.kind, metadata: { name: o.name, labels: { [MANAGED_BY]: MANAGER } } });
  return fakeKubeConfig(fake, join(dir, `kc-${Date.now()}.yaml`));
}

describe('a delete the API server refuses', () => {
  it('fails cleanupCluster', async () => {
    const path = '/api/v1/namespaces/atst-refused';
    const kc = await start({ [path]: 403 }, [{ path, kind: 'Namespace', name: 'atst-refused' }]);
    await expect(cleanupCluster(kc, { namespaceGoneMs: 1000 })).rejects.toMatchObject({ code: 403 });
  });

  it("fails teardownVariant when it is the variant's cluster role binding", async () => {
    const path = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/atst-v-agent';
    const kc = await start({ [path]: 403 }, [{ path, kind: 'ClusterRoleBinding', name: 'atst-v-agent' }]);
    await expect(teardownVariant(kc, 'atst-v', { namespaceGoneMs: 1000 })).rejects.toMatchObject({ code: 403 });
  });
});
