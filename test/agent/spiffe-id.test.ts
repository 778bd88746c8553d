import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseSpiffeId, spiffeIdFor, spiffeIdProblem, trustDomainId } from '../../src/agent/spiffe-id.js';

describe('parseSpiffeId', () => {
  it('splits valid IDs into trust domain and path', () => {
    expect(parseSpiffeId('spiffe://example.org/ns/default/sa/api')).toEqual({
      trustDomain: 'example.org',
      path: '/ns/default/sa/api',
      id: 'spiffe://example.org/ns/default/sa/api',
    });
    expect(parseSpiffeId('spiffe://example.org')).toEqual({ trustDomain: 'example.org', path: '', id: 'spiffe://example.org' });
    expect(parseSpiffeId('spiffe://a-b_c.d9/Upper.Case_ok-1/x').path).toBe('/Upper.Case_ok-1/x');
  });

  const long = `spiffe://example.org/${'a'.repeat(2100)}`;
  it.each([
    ['', 'got an empty string'],
    ['foo', 'must use the spiffe:// scheme, got "foo"'],
    ['SPIFFE://example.org/a', 'must use the spiffe:// scheme'],
    ['https://example.org/a', 'must use the spiffe:// scheme'],
    ['spiffe:/example.org/a', 'must use the spiffe:// scheme'],
    ['spiffe://', 'must name a trust domain'],
    ['spiffe:///a', 'must name a trust domain'],
    ['spiffe://Example.org/a', 'must have a trust domain of lowercase letters'],
    ['spiffe://example.org:8080/a', 'no port'],
    ['spiffe://user@example.org/a', 'no user info'],
    ['spiffe://example.org/', 'must not end with "/"'],
    ['spiffe://example.org/a/', 'must not have empty path segments'],
    ['spiffe://example.org//a', 'must not have empty path segments'],
    ['spiffe://example.org/a/./b', 'must not have "." or ".." path segments'],
    ['spiffe://example.org/a/..', 'must not have "." or ".." path segments'],
    ['spiffe://example.org/a?x=1', 'must not contain a query or fragment'],
    ['spiffe://example.org/a#frag', 'must not contain a query or fragment'],
    ['spiffe://example.org/a b', 'path segments of letters, digits'],
    ['spiffe://example.org/caf%C3%A9', 'path segments of letters, digits'],
    [long, 'must be at most 2048 characters'],
  ])('rejects %#: %s', (input, rule) => {
    expect(spiffeIdProblem(input)).toContain(rule);
    let caught: unknown;
    try {
      parseSpiffeId(input, 'spiffe_id');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const message = (caught as ConfigError).message;
    // The message names the input first, then the rule it breaks.
    expect(message.startsWith('spiffe_id ')).toBe(true);
    expect(message).toContain(rule);
  });

  it('builds IDs from segments and refuses segments that would not round-trip', () => {
    expect(spiffeIdFor('example.org', 'ns', 'default', 'sa', 'api').id).toBe('spiffe://example.org/ns/default/sa/api');
    expect(() => spiffeIdFor('example.org', 'uid', '..')).toThrow(ConfigError);
    expect(() => spiffeIdFor('example.org', 'ns', 'a/sa/b')).toThrow('SPIFFE ID path segment must not contain "/", got "a/sa/b"');
    expect(() => spiffeIdFor('example.org', '', 'b')).toThrow(/empty path segments/);
    expect(trustDomainId('example.org')).toBe('spiffe://example.org');
    expect(() => trustDomainId('Bad TD')).toThrow(/^trust domain must have a trust domain of lowercase/);
  });
});
