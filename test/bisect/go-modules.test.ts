// Reading go's refusals and choosing the nearest served version, on go's own words as it prints
// them for SPIRE 1.15.x's two known cases.
import { describe, expect, it } from 'vitest';
import { nearestServed, parseVersionsLine, refusedModules, replaceArgument } from '../../src/bisect/index.js';

const EJBCA_410 = `go: downloading github.com/spiffe/go-spiffe/v2 v2.8.1
go: github.com/Keyfactor/ejbca-go-client-sdk@v1.1.0: reading https://proxy.golang.org/github.com/%21keyfactor/ejbca-go-client-sdk/@v/v1.1.0.zip: 410 Gone
	server response: not found: github.com/Keyfactor/ejbca-go-client-sdk@v1.1.0: invalid version: unknown revision v1.1.0`;

const SDK_403 = `pkg/common/plugin/x.go:5:2: github.com/spiffe/spire-plugin-sdk@v1.4.4-0.20260617144146-5dcde407c4d1: reading https://proxy.golang.org/github.com/spiffe/spire-plugin-sdk/@v/v1.4.4-0.20260617144146-5dcde407c4d1.zip: 403 Forbidden
	server response: This module version is not available.`;

describe('refusedModules', () => {
  it('names the module and version of a 410 Gone once, not the escaped URL path', () => {
    expect(refusedModules(EJBCA_410).map((m) => `${m.module}@${m.version}`)).toEqual(['github.com/Keyfactor/ejbca-go-client-sdk@v1.1.0']);
  });

  it('reads a pseudo-version the proxy refuses, with the refusal on the server-response line', () => {
    const [m] = refusedModules(SDK_403);
    expect(m).toMatchObject({ module: 'github.com/spiffe/spire-plugin-sdk', version: 'v1.4.4-0.20260617144146-5dcde407c4d1' });
    expect(m!.line).toContain('403 Forbidden');
  });

  it('ignores module versions on lines that refuse nothing, and module-cache paths', () => {
    const out = `go: downloading github.com/google/uuid v1.6.0
/root/go/pkg/mod/github.com/!keyfactor/ejbca-go-client-sdk@v1.1.0/api.go:3: undefined: Foo
go: github.com/google/uuid@v1.6.0: verifying module: checksum mismatch`;
    expect(refusedModules(out)).toEqual([]);
  });
});

describe('nearestServed', () => {
  it('takes the highest served version below the wanted one (ejbca v1.1.0 → v1.0.2)', () => {
    expect(nearestServed('v1.1.0', ['v1.0.0', 'v1.0.2', 'v1.0.1'])).toBe('v1.0.2');
  });

  it('counts a pseudo-version as just below its base: v1.4.4-0.… → v1.4.3, never v1.4.4 or v1.5.0', () => {
    expect(nearestServed('v1.4.4-0.20260617144146-5dcde407c4d1', ['v1.4.2', 'v1.4.3', 'v1.4.4', 'v1.5.0'])).toBe('v1.4.3');
  });

  it('takes the lowest above when nothing below is served, null when nothing is, and never the wanted version itself', () => {
    expect(nearestServed('v0.9.0', ['v1.2.0', 'v1.0.0'])).toBe('v1.0.0');
    expect(nearestServed('v1.0.0', [])).toBeNull();
    expect(nearestServed('v1.0.0', ['v1.0.0'])).toBeNull();
    expect(nearestServed('v2.0.0+incompatible', ['v1.9.0', 'v2.1.0+incompatible'])).toBe('v1.9.0');
  });
});

describe('parseVersionsLine', () => {
  it("reads go list -m -versions' line of the module, past go's other lines", () => {
    expect(parseVersionsLine('go: downloading x\ngithub.com/a/b v1.0.0 v1.0.1\n', 'github.com/a/b')).toEqual(['v1.0.0', 'v1.0.1']);
    expect(parseVersionsLine('github.com/a/b\n', 'github.com/a/b')).toEqual([]);
    expect(parseVersionsLine('go: module github.com/a/b: 403 Forbidden', 'github.com/a/b')).toEqual([]);
  });
});

describe('replaceArgument', () => {
  const abs = (p: string) => (p.startsWith('/') ? p : `/work/${p.replace(/^\.\//, '')}`);
  it('passes module replacements through and makes a local folder absolute', () => {
    expect(replaceArgument('github.com/a/b@v1.1.0=github.com/a/b@v1.0.2', abs)).toBe('github.com/a/b@v1.1.0=github.com/a/b@v1.0.2');
    expect(replaceArgument('github.com/spiffe/spire-plugin-sdk=./sdk', abs)).toBe('github.com/spiffe/spire-plugin-sdk=/work/sdk');
    expect(replaceArgument('github.com/a/b=/opt/b', abs)).toBe('github.com/a/b=/opt/b');
  });

  it('refuses what go mod edit would', () => {
    for (const bad of ['github.com/a/b', '=x', 'a=', 'a b=c']) expect(replaceArgument(bad, abs), bad).toBeNull();
  });
});
