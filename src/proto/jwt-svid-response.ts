// A hand-written encoder for JWTSVIDResponse, the answer to every admitted FetchJWTSVID: one
// Buffer sized up front and filled in place, instead of protobufjs's writer on the hot path.
// Fields in number order and empty strings omitted, as grpc-go writes them (protobufjs writes an
// empty string that is present; both decode to the same message).
import type { JWTSVIDResponse } from './gen/JWTSVIDResponse.js';

function varintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    len++;
  }
  return len;
}

function writeVarint(buf: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[at++] = n;
  return at;
}

/** Length of a string field (tag, length, bytes) or 0 when the string is empty (proto3 default). */
function stringFieldLength(s: string | undefined): number {
  if (!s) return 0;
  const n = Buffer.byteLength(s);
  return 1 + varintLength(n) + n;
}

function writeStringField(buf: Buffer, at: number, tag: number, s: string | undefined): number {
  if (!s) return at;
  buf[at++] = tag;
  const n = Buffer.byteLength(s);
  at = writeVarint(buf, at, n);
  return at + buf.write(s, at, n, 'utf8');
}

/** JWTSVIDResponse{ repeated JWTSVID svids = 1 }, JWTSVID{ spiffe_id = 1; svid = 2; hint = 3 }. */
export function encodeJWTSVIDResponse(res: JWTSVIDResponse): Buffer {
  const svids = res.svids ?? [];
  const inner = svids.map((s) => stringFieldLength(s.spiffe_id) + stringFieldLength(s.svid) + stringFieldLength(s.hint));
  let total = 0;
  for (const n of inner) total += 1 + varintLength(n) + n;
  const buf = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < svids.length; i++) {
    const s = svids[i]!;
    buf[at++] = 0x0a;
    at = writeVarint(buf, at, inner[i]!);
    at = writeStringField(buf, at, 0x0a, s.spiffe_id);
    at = writeStringField(buf, at, 0x12, s.svid);
    at = writeStringField(buf, at, 0x1a, s.hint);
  }
  return buf;
}
