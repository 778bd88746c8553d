// `attestorm init` and `attestorm validate` through the real CLI: the starter scenario is written
// where asked, passes the project's own scenario loader, names a schema that exists from where it
// lies, and an existing file is kept unless --force; validate names every problem of a bad file.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readScenarioFile, schemaRefFrom, SCENARIO_JSON_SCHEMA_PATH, STARTER_FILE } from '../../src/scenario/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';

const BIN = join(PROJECT_ROOT, 'bin/attestorm.js');
const base = mkdtempSync(join(tmpdir(), 'attestorm-init-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function cli(...args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: base, encoding: 'utf8', timeout: 60_000 });
}

describe('attestorm init', () => {
  it('writes a starter scenario that the scenario loader accepts, its $schema line pointing at the schema', () => {
    const r = cli('init', 'new/folder');
    expect(r.status, r.stderr).toBe(0);
    const file = join(base, 'new/folder', STARTER_FILE);
    expect(r.stdout).toContain(`wrote new/folder/${STARTER_FILE}`);
    const loaded = readScenarioFile(file);
    expect(loaded.scenario.variants.map((v) => v.name)).toEqual(['pre-attestation', 'post-attestation', 'disabled']);
    const ref = /^# yaml-language-server: \$schema=(\S+)$/m.exec(readFileSync(file, 'utf8'))?.[1];
    expect(ref).toBeDefined();
    expect(resolve(join(base, 'new/folder'), ref!)).toBe(SCENARIO_JSON_SCHEMA_PATH);
  });

  it('refuses to replace an existing file, naming it, unless --force', () => {
    const file = join(base, STARTER_FILE);
    writeFileSync(file, 'name: mine\n');
    const refused = cli('init');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(`${STARTER_FILE} already exists: pass --force to replace it`);
    expect(readFileSync(file, 'utf8')).toBe('name: mine\n');
    const forced = cli('init', '--force');
    expect(forced.status, forced.stderr).toBe(0);
    expect(readScenarioFile(file).scenario.name).toBe('starter');
  });

  it('points an installed package’s scenario at node_modules/attestorm', () => {
    const project = join(base, 'app');
    expect(schemaRefFrom(project, join(project, 'node_modules/attestorm/scenarios/scenario.schema.json'))).toBe(
      './node_modules/attestorm/scenarios/scenario.schema.json',
    );
    expect(schemaRefFrom(join(project, 'storms'), join(project, 'node_modules/attestorm/scenarios/scenario.schema.json'))).toBe(
      '../node_modules/attestorm/scenarios/scenario.schema.json',
    );
  });
});

describe('attestorm validate', () => {
  it('accepts the shipped quick scenario and says what it holds', () => {
    const r = cli('validate', join(PROJECT_ROOT, 'scenarios/quick.yaml'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('scenario quick, variants pre-attestation, post-attestation, disabled, disabled-unbounded, 20 s each');
  });

  it('exits 2 naming every problem of every file, by path and rule', () => {
    const bad = join(base, 'bad.yaml');
    writeFileSync(bad, 'name: bad\nload: { workersPerPod: 0 }\nplacements: [pre-attestation]\n');
    const r = cli('validate', bad, join(base, 'missing.yaml'));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/bad\.yaml: load\.workersPerPod must be/);
    expect(r.stderr).toContain('missing.yaml: cannot read the scenario file');
    expect(existsSync(join(base, 'reports'))).toBe(false);
  });
});
