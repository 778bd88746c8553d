// A record-only HDR histogram for workers (lowest value 1, 3 significant digits, growing as needed)
// that encodes into HdrHistogram's V2 compressed format, which hdr-histogram-js decodes in the pod
// process and the generator. Workers only record and encode, so they do without hdr-histogram-js:
// its index module loads an embedded WASM build, pako and the log reader/writer — ~3 MiB of every
// worker's memory for code a worker never runs.
import { deflateSync } from 'node:zlib';

const SIGNIFICANT_DIGITS = 3;
// Unit resolution up to 2·10³ needs 2048 sub-buckets; buckets above the first use their top half.
const SUB_BUCKET_HALF_COUNT_MAGNITUDE = 10;
const SUB_BUCKET_HALF_COUNT = 1 << SUB_BUCKET_HALF_COUNT_MAGNITUDE;
const V2_ENCODING_COOKIE = 0x1c849303 | 0x10;
const V2_COMPRESSED_ENCODING_COOKIE = 0x1c849304 | 0x10;
const HEADER_BYTES = 40;
const TWO_POW_32 = 2 ** 32;

/** floor(log2(v)) for integers 1 ≤ v < 2^53, exactly (Math.log2 can round up just below a power of two). */
function floorLog2(v: number): number {
  return v < TWO_POW_32 ? 31 - Math.clz32(v) : 63 - Math.clz32(Math.floor(v / TWO_POW_32));
}

/** The counts-array index HdrHistogram uses for `value` with these parameters. */
export function countsIndex(value: number): number {
  const bucket = Math.max(0, floorLog2(value) - SUB_BUCKET_HALF_COUNT_MAGNITUDE);
  const subBucket = Math.floor(value / 2 ** bucket);
  return (bucket + 1) * SUB_BUCKET_HALF_COUNT + subBucket - SUB_BUCKET_HALF_COUNT;
}

/** Appends a ZigZag LEB128 long (the V2 payload word) at `pos`; returns the new position. */
function putZigZag(buf: Buffer, pos: number, value: number): number {
  let v = value >= 0 ? value * 2 : -value * 2 - 1;
  while (v >= 0x80) {
    buf[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[pos++] = v;
  return pos;
}

export class LatencyHistogram {
  // 4096 slots cover values below 8.192 ms (16 KiB); each doubling covers 2^(slots/1024) times more.
  #counts = new Uint32Array(4096);
  #maxIndex = -1;
  #maxValue = 0;
  totalCount = 0;

  /** Records one value (whole microseconds, ≥ 1). */
  recordValue(value: number): void {
    const v = Math.max(1, Math.round(value));
    const i = countsIndex(v);
    if (i >= this.#counts.length) {
      let n = this.#counts.length;
      while (n <= i) n *= 2;
      const grown = new Uint32Array(n);
      grown.set(this.#counts);
      this.#counts = grown;
    }
    this.#counts[i]!++;
    this.totalCount++;
    if (i > this.#maxIndex) this.#maxIndex = i;
    if (v > this.#maxValue) this.#maxValue = v;
  }

  reset(): void {
    this.#counts.fill(0, 0, this.#maxIndex + 1);
    this.#maxIndex = -1;
    this.#maxValue = 0;
    this.totalCount = 0;
  }

  /** The V2 encoding, uncompressed: header, then counts with runs of zeros as negative run lengths. */
  encode(): Buffer {
    const counts = this.#counts;
    const limit = this.#maxIndex + 1;
    // Counts and run lengths stay below 2^32, so a word takes at most 5 bytes.
    const buf = Buffer.allocUnsafe(HEADER_BYTES + limit * 5);
    let pos = HEADER_BYTES;
    let i = 0;
    while (i < limit) {
      const count = counts[i++]!;
      if (count === 0) {
        let zeros = 1;
        while (i < limit && counts[i] === 0) {
          zeros++;
          i++;
        }
        pos = putZigZag(buf, pos, zeros > 1 ? -zeros : 0);
      } else {
        pos = putZigZag(buf, pos, count);
      }
    }
    buf.writeInt32BE(V2_ENCODING_COOKIE, 0);
    buf.writeInt32BE(pos - HEADER_BYTES, 4);
    buf.writeInt32BE(0, 8); // normalizing index offset
    buf.writeInt32BE(SIGNIFICANT_DIGITS, 12);
    buf.writeBigInt64BE(1n, 16); // lowest discernible value
    buf.writeBigInt64BE(BigInt(Math.max(2, this.#maxValue)), 24); // highest trackable value
    buf.writeDoubleBE(1, 32); // integer-to-double conversion ratio
    return buf.subarray(0, pos);
  }

  /** What hdr-histogram-js's encodeIntoCompressedBase64 produces: cookie, length, zlib deflate, base64. */
  encodeIntoCompressedBase64(): string {
    const compressed = deflateSync(this.encode());
    const out = Buffer.allocUnsafe(8 + compressed.length);
    out.writeInt32BE(V2_COMPRESSED_ENCODING_COOKIE, 0);
    out.writeInt32BE(compressed.length, 4);
    compressed.copy(out, 8);
    return out.toString('base64');
  }
}
