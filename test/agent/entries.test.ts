import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { deriveEntries, matchEntries, parseEntries, parseSelector, readEntriesFile } from '../../src/agent/entries.js';
import type { Selector } from '../../src/agent/types.js';
import { configProblems } from '../support/config-problems.js';

const TD = 'example.org';
const sel = (text: string): Selector => parseSelector(text)!;

const problemsOf = configProblems;

describe('parseSelector', () => {
  it('splits at the first colon only', () => {
    expect(parseSelector('k8s:ns:default')).toEqual({ type: 'k8s', value: 'ns:default' });
    expect(parseSelector('k8s:pod-label:app:web')).toEqual({ type: 'k8s', value: 'pod-label:app:web' });
    expect(parseSelector('unix:uid:0')).toEqual({ type: 'unix', value: 'uid:0' });
    expect(parseSelector('k8s')).toBeNull();
    expect(parseSelector(':x')).toBeNull();
    expect(parseSelector('x:')).toBeNull();
  });
});

describe('parseEntries', () => {
  it('reads entries with selectors and optional hints', () => {
    const yaml = [
      'entries:',
      '  - spiffeId: spiffe://example.org/web',
      '    selectors: ["k8s:ns:default", "k8s:sa:web"]',
      '    hint: external',
      '  - spiffeId: spiffe://example.org/root',
      '    selectors:',
      '      - unix:uid:0',
    ].join('\n');
    expect(parseEntries(yaml, 'entries.yaml', TD)).toEqual([
      {
        spiffeId: 'spiffe://example.org/web',
        selectors: [
          { type: 'k8s', value: 'ns:default' },
          { type: 'k8s', value: 'sa:web' },
        ],
        hint: 'external',
      },
      { spiffeId: 'spiffe://example.org/root', selectors: [{ type: 'unix', value: 'uid:0' }] },
    ]);
  });

  it('accepts an empty list (every caller is then refused an identity)', () => {
    expect(parseEntries('entries: []', 'e.yaml', TD)).toEqual([]);
  });

  it('names the file and the path of the bad spiffeId', () => {
    const yaml = [
      'entries:',
      '  - { spiffeId: "spiffe://example.org/a", selectors: ["unix:uid:1"] }',
      '  - { spiffeId: "spiffe://example.org/b", selectors: ["unix:uid:2"] }',
      '  - { spiffeId: "foo", selectors: ["unix:uid:3"] }',
    ].join('\n');
    expect(problemsOf(() => parseEntries(yaml, 'entries.yaml', TD))).toEqual(['entries.yaml: entries[2].spiffeId must use the spiffe:// scheme, got "foo"']);
  });

  it('lists every problem of a bad file, each with its path and rule', () => {
    const yaml = [
      'entries:',
      '  - spiffeId: spiffe://other.org/a',
      '    selectors: []',
      '    hint: 5',
      '    extra: 1',
      '  - spiffeId: spiffe://example.org',
      '    selectors: [":x", "k8s", 7]',
      '  - 3',
      '  - selectors: ["a:b"]',
    ].join('\n');
    expect(problemsOf(() => parseEntries(yaml, 'bad.yaml', TD))).toEqual([
      'bad.yaml: entries[0].spiffeId must be in trust domain "example.org" (the agent\'s CA signs no other), got "spiffe://other.org/a"',
      'bad.yaml: entries[0].selectors must list at least one selector, got []',
      'bad.yaml: entries[0].hint must be a string, got 5',
      'bad.yaml: entries[0]: unknown key(s) extra',
      'bad.yaml: entries[1].spiffeId must have a path after the trust domain (spiffe://example.org names the trust domain, not a workload), got "spiffe://example.org"',
      'bad.yaml: entries[1].selectors[0] must be a "type:value" selector with both sides non-empty (e.g. "k8s:ns:default"), got ":x"',
      'bad.yaml: entries[1].selectors[1] must be a "type:value" selector with both sides non-empty (e.g. "k8s:ns:default"), got "k8s"',
      'bad.yaml: entries[1].selectors[2] must be a "type:value" string, got 7',
      'bad.yaml: entries[2] must be a mapping with spiffeId, selectors and optionally hint, got 3',
      'bad.yaml: entries[3].spiffeId must be a spiffe://<trust domain>/<path> URI, got nothing',
    ]);
  });

  it('rejects files without an entries list', () => {
    expect(problemsOf(() => parseEntries('', 'e.yaml', TD))).toEqual(['e.yaml must be a mapping with a top-level "entries" list, got null']);
    expect(problemsOf(() => parseEntries('entrys: []', 'e.yaml', TD))).toEqual([
      'e.yaml: entries must be a list of entries, got nothing',
      'e.yaml: unknown key(s) entrys',
    ]);
    expect(problemsOf(() => parseEntries('entries: 5', 'e.yaml', TD))).toEqual(['e.yaml: entries must be a list of entries, got 5']);
  });

  it('rejects text that is not YAML, naming the file and the position', () => {
    const [problem] = problemsOf(() => parseEntries('entries: [', 'e.yaml', TD));
    expect(problem).toMatch(/^e\.yaml: not valid YAML \(.*line 1/);
  });
});

describe('readEntriesFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'attestorm-entries-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file and names it in problems', async () => {
    const good = join(dir, 'good.yaml');
    await writeFile(good, 'entries:\n  - spiffeId: spiffe://example.org/x\n    selectors: ["unix:uid:7"]\n');
    expect(await readEntriesFile(good, TD)).toEqual([{ spiffeId: 'spiffe://example.org/x', selectors: [{ type: 'unix', value: 'uid:7' }] }]);

    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'entries:\n  - spiffeId: spiffe://example.org/x\n    selectors: ["uid"]\n');
    await expect(readEntriesFile(bad, TD)).rejects.toThrow(`${bad}: entries[0].selectors[0] must be a "type:value" selector`);
  });

  it('reports a missing file as a ConfigError naming it', async () => {
    const missing = join(dir, 'missing.yaml');
    await expect(readEntriesFile(missing, TD)).rejects.toBeInstanceOf(ConfigError);
    await expect(readEntriesFile(missing, TD)).rejects.toThrow(`entries ${missing}: cannot read the file`);
  });
});

describe('matchEntries', () => {
  const entries = parseEntries(
    [
      'entries:',
      '  - { spiffeId: "spiffe://example.org/web", selectors: ["k8s:ns:default", "k8s:sa:web"] }',
      '  - { spiffeId: "spiffe://example.org/ns-default", selectors: ["k8s:ns:default"] }',
      '  - { spiffeId: "spiffe://example.org/root", selectors: ["unix:uid:0"], hint: "root" }',
    ].join('\n'),
    'entries.yaml',
    TD,
  );

  it("returns every entry whose selectors are all among the caller's, in file order", () => {
    const caller = ['k8s:sa:web', 'k8s:ns:default', 'k8s:pod-name:web-1', 'unix:uid:1000'].map(sel);
    expect(matchEntries(entries, caller).map((e) => e.spiffeId)).toEqual(['spiffe://example.org/web', 'spiffe://example.org/ns-default']);
  });

  it("needs all of an entry's selectors, compared by type and value", () => {
    expect(matchEntries(entries, [sel('k8s:sa:web')])).toEqual([]);
    expect(matchEntries(entries, [sel('k8s:ns:default')]).map((e) => e.spiffeId)).toEqual(['spiffe://example.org/ns-default']);
    // Same value under another type is a different selector.
    expect(matchEntries(entries, [{ type: 'k8s', value: 'uid:0' }])).toEqual([]);
    expect(matchEntries(entries, [sel('unix:uid:0')])[0]?.hint).toBe('root');
    expect(matchEntries(entries, [])).toEqual([]);
  });
});

describe('deriveEntries (no entries file)', () => {
  it('gives a pod spiffe://<td>/ns/<ns>/sa/<sa>', () => {
    const caller = ['unix:uid:0', 'k8s:ns:payments', 'k8s:pod-name:p-1', 'k8s:sa:billing'].map(sel);
    const derived = deriveEntries(TD, caller);
    expect(derived).toEqual([
      {
        spiffeId: 'spiffe://example.org/ns/payments/sa/billing',
        selectors: [
          { type: 'k8s', value: 'ns:payments' },
          { type: 'k8s', value: 'sa:billing' },
        ],
      },
    ]);
    // A derived entry matches the caller it came from, like a file entry would.
    expect(matchEntries(derived, caller)).toEqual(derived);
  });

  it('falls back to spiffe://<td>/uid/<uid> outside a pod or with half the pod selectors', () => {
    expect(deriveEntries(TD, ['unix:uid:1000', 'unix:gid:1000'].map(sel)).map((e) => e.spiffeId)).toEqual(['spiffe://example.org/uid/1000']);
    expect(deriveEntries(TD, ['k8s:ns:default', 'unix:uid:5'].map(sel)).map((e) => e.spiffeId)).toEqual(['spiffe://example.org/uid/5']);
  });

  it('derives nothing without the selectors it needs, or from values that are not path segments', () => {
    expect(deriveEntries(TD, [])).toEqual([]);
    expect(deriveEntries(TD, ['unix:gid:0', 'k8s:sa:web'].map(sel))).toEqual([]);
    expect(deriveEntries(TD, [sel('unix:uid:..')])).toEqual([]);
    expect(deriveEntries(TD, ['k8s:ns:a b', 'k8s:sa:web', 'unix:uid:3'].map(sel)).map((e) => e.spiffeId)).toEqual(['spiffe://example.org/uid/3']);
  });
});
