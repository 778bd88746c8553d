// The committed manifests/ are what `npm run gen:manifests` renders today: a change to rendering
// shows up as a diff of those files in review, and this test fails until they are regenerated.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const MANIFESTS = join(ROOT, 'manifests');
const scenarios = readdirSync(MANIFESTS).filter((n) => statSync(join(MANIFESTS, n)).isDirectory());
const dir = mkdtempSync(join(tmpdir(), 'attestorm-manifests-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('manifests/: the rendered manifests of the shipped Kubernetes scenarios', () => {
  it('holds the scenarios the CI workflow and the quick start run in a cluster', () => {
    expect(scenarios.sort()).toEqual(['ci-kind', 'quick']);
  });

  it('regenerates with one command (the package script runs it for every folder)', () => {
    const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts['gen:manifests'] as string;
    for (const name of scenarios) expect(script).toContain(`scenarios/${name}.yaml --out manifests/${name}`);
  });

  for (const name of scenarios) {
    it(`${name}: byte for byte what the renderer writes now`, () => {
      const out = join(dir, name);
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/attestorm.js'), 'kind', 'render', `scenarios/${name}.yaml`, '--out', out], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      const committed = readdirSync(join(MANIFESTS, name)).sort();
      expect(readdirSync(out).sort(), `manifests/${name}: the variants (run npm run gen:manifests)`).toEqual(committed);
      for (const f of committed) {
        expect(readFileSync(join(out, f), 'utf8'), `manifests/${name}/${f} drifted from the renderer: run npm run gen:manifests and review the diff`).toBe(
          readFileSync(join(MANIFESTS, name, f), 'utf8'),
        );
      }
    }, 60_000);
  }
});
