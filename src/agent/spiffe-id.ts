// SPIFFE ID parsing by the rules of the SPIFFE-ID spec, so that requested IDs (FetchJWTSVID's
// spiffe_id), registration entries and token subjects are all held to the same standard.
import { ConfigError } from '../errors.js';

export interface SpiffeId {
  /** e.g. "example.org" */
  trustDomain: string;
  /** "" for the trust domain's own ID, otherwise "/seg/seg". */
  path: string;
  /** The canonical string form, spiffe://<trust domain><path>. */
  id: string;
}

const SCHEME = 'spiffe://';
const TRUST_DOMAIN_RE = /^[a-z0-9._-]+$/;
const SEGMENT_RE = /^[A-Za-z0-9._-]+$/;
// The spec's limit; it keeps IDs fit for a URI SAN and bounds what a caller can make us hold.
const MAX_LENGTH = 2048;

function quote(s: string): string {
  const json = JSON.stringify(s);
  return json.length > 80 ? `${json.slice(0, 77)}..."` : json;
}

/**
 * The rule `s` breaks, or null when it is a valid SPIFFE ID. The rule reads after the input's name:
 * `${what} ${rule}` — "must use the spiffe:// scheme, got \"foo\"".
 */
export function spiffeIdProblem(s: string): string | null {
  const got = `got ${quote(s)}`;
  if (s.length === 0) return 'must be a SPIFFE ID (spiffe://<trust domain>/<path>), got an empty string';
  if (s.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters, got ${s.length}`;
  // The scheme is compared case-sensitively on purpose: the spec allows only the lowercase form.
  if (!s.startsWith(SCHEME)) return `must use the spiffe:// scheme, ${got}`;
  const rest = s.slice(SCHEME.length);
  if (/[?#]/.test(rest)) return `must not contain a query or fragment, ${got}`;
  const slash = rest.indexOf('/');
  const trustDomain = slash === -1 ? rest : rest.slice(0, slash);
  if (trustDomain.length === 0) return `must name a trust domain after spiffe://, ${got}`;
  if (!TRUST_DOMAIN_RE.test(trustDomain)) {
    return `must have a trust domain of lowercase letters, digits, ".", "_" and "-" only (no port, no user info), ${got}`;
  }
  if (slash === -1) return null;
  const path = rest.slice(slash);
  if (path === '/') return `must not end with "/", ${got}`;
  const segments = path.slice(1).split('/');
  for (const seg of segments) {
    if (seg.length === 0) return `must not have empty path segments ("//" or a trailing "/"), ${got}`;
    if (seg === '.' || seg === '..') return `must not have "." or ".." path segments, ${got}`;
    if (!SEGMENT_RE.test(seg)) return `must have path segments of letters, digits, ".", "_" and "-" only, ${got}`;
  }
  return null;
}

/** Parses a SPIFFE ID; a bad one is a ConfigError naming `what` (e.g. "spiffe_id") and the rule broken. */
export function parseSpiffeId(s: string, what = 'SPIFFE ID'): SpiffeId {
  const problem = spiffeIdProblem(s);
  if (problem !== null) throw new ConfigError(`${what} ${problem}`);
  const rest = s.slice(SCHEME.length);
  const slash = rest.indexOf('/');
  return slash === -1 ? { trustDomain: rest, path: '', id: s } : { trustDomain: rest.slice(0, slash), path: rest.slice(slash), id: s };
}

/** spiffe://<trust domain>/<segments...>, each segment checked; a bad segment is a ConfigError. */
export function spiffeIdFor(trustDomain: string, ...segments: string[]): SpiffeId {
  // A "/" inside a value would silently add path segments: ns "a/sa/b" must not mint someone else's ID.
  const bad = segments.find((seg) => seg.includes('/'));
  if (bad !== undefined) throw new ConfigError(`SPIFFE ID path segment must not contain "/", got ${quote(bad)}`);
  const path = segments.map((seg) => `/${seg}`).join('');
  return parseSpiffeId(`${SCHEME}${trustDomain}${path}`);
}

/** The ID of the trust domain itself, spiffe://<trust domain>: the URI SAN of the CA and the bundle key. */
export function trustDomainId(trustDomain: string): string {
  return parseSpiffeId(`${SCHEME}${trustDomain}`, 'trust domain').id;
}
