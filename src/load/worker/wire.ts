// Hand-rolled protobuf for the few tiny Workload API messages a worker sends or reads, so a worker
// needs no proto loader (memory) and encodes each request once per run, not once per call.
import type { LoadMethod } from './messages.js';

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

function stringField(field: number, value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint(bytes.length)]), bytes]);
}

/** JWTSVIDRequest{ repeated string audience = 1; string spiffe_id = 2 } with one audience. */
export function encodeJwtSvidRequest(audience: string): Buffer {
  return stringField(1, audience);
}

/** ValidateJWTSVIDRequest{ string audience = 1; string svid = 2 }. */
export function encodeValidateRequest(audience: string, svid: string): Buffer {
  return Buffer.concat([stringField(1, audience), stringField(2, svid)]);
}

/** The streaming requests (X509SVIDRequest, X509BundlesRequest, JWTBundlesRequest) are empty. */
export const EMPTY_REQUEST = Buffer.alloc(0);

function readVarint(buf: Buffer, pos: number): [number, number] {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++]!;
    result += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return [result, pos];
    shift += 7;
    if (shift > 49) throw new Error('varint too long');
  }
}

/** Yields (field, wireType, value-start, value-end) for length-delimited fields; skips the rest. */
function* fields(buf: Buffer): Generator<[number, number, number]> {
  let pos = 0;
  while (pos < buf.length) {
    const [tag, p1] = readVarint(buf, pos);
    const field = tag >>> 3;
    const wire = tag & 7;
    pos = p1;
    if (wire === 2) {
      const [len, p2] = readVarint(buf, pos);
      yield [field, p2, p2 + len];
      pos = p2 + len;
    } else if (wire === 0) {
      pos = readVarint(buf, pos)[1];
    } else if (wire === 1) {
      pos += 8;
    } else if (wire === 5) {
      pos += 4;
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
}

/** The first token (svids[0].svid) of a JWTSVIDResponse, or null. */
export function decodeFirstJwtSvid(buf: Buffer): string | null {
  for (const [field, start, end] of fields(buf)) {
    if (field !== 1) continue;
    const svid = buf.subarray(start, end);
    for (const [f2, s2, e2] of fields(svid)) if (f2 === 2) return svid.toString('utf8', s2, e2);
    return null;
  }
  return null;
}

export const METHOD_PATHS: Record<LoadMethod, string> = {
  FetchX509SVID: '/SpiffeWorkloadAPI/FetchX509SVID',
  FetchX509Bundles: '/SpiffeWorkloadAPI/FetchX509Bundles',
  FetchJWTSVID: '/SpiffeWorkloadAPI/FetchJWTSVID',
  FetchJWTBundles: '/SpiffeWorkloadAPI/FetchJWTBundles',
  ValidateJWTSVID: '/SpiffeWorkloadAPI/ValidateJWTSVID',
};

export const STREAMING: ReadonlySet<LoadMethod> = new Set(['FetchX509SVID', 'FetchX509Bundles', 'FetchJWTBundles']);
