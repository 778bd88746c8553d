// Strict decoders for the five Workload API request messages, installed as the agent's request
// deserializers. protobufjs (through proto-loader) accepts a string that runs past the end of the
// message, a length of 2^32-1 with nothing behind it, invalid UTF-8 and a known field with the
// wrong wire type; grpc-go refuses all of them, so a reference agent must too. The requests are
// tiny (at most two string fields), so a hand-written reader is short and cheaper than protobufjs.
//
// A decoder never throws: grpc-js would turn a throw into a bare "Error deserializing request".
// It returns a MalformedRequest instead, and the handler binding ends the call with INTERNAL and
// the problem, before any stage of the pipeline runs.
import { isUtf8 } from 'node:buffer';

/** The prefix grpc-go gives a request it cannot unmarshal (status INTERNAL). */
export const UNMARSHAL_ERROR_PREFIX = 'grpc: error unmarshalling request: ';

/** What a request deserializer returns for bytes that are not a valid message of its type. */
export class MalformedRequest {
  /** What was wrong, e.g. "field 1 (audience) length 5 runs past the end of the 4-byte message". */
  readonly problem: string;
  constructor(problem: string) {
    this.problem = problem;
  }
  /** The status details: the grpc-go wording followed by the problem. */
  get details(): string {
    return UNMARSHAL_ERROR_PREFIX + this.problem;
  }
}

/** Thrown inside a decoder only; turned into a MalformedRequest at its boundary. */
class DecodeError extends Error {}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;
const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'start-group', 'end-group', 'fixed32'];
const MAX_FIELD_NUMBER = 2 ** 29 - 1;
const MAX_GROUP_DEPTH = 100;

/** A cursor over one message. `fields` names the message's string fields by number. */
class Reader {
  pos = 0;
  readonly buf: Buffer;
  readonly fields: readonly (string | undefined)[];
  constructor(buf: Buffer, fields: readonly (string | undefined)[]) {
    this.buf = buf;
    this.fields = fields;
  }

  fail(problem: string): never {
    throw new DecodeError(problem);
  }

  pastEnd(what: string): never {
    this.fail(`${what} runs past the end of the ${this.buf.length}-byte message`);
  }

  /** A varint as a number; exact below 2^53, which is all lengths and tags need. */
  varint(): number {
    const buf = this.buf;
    const start = this.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= buf.length) this.pastEnd(`varint at byte ${start}`);
      const b = buf[this.pos++]!;
      if (i === 9 && b > 1) this.fail(`varint at byte ${start} overflows 64 bits`);
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    // Unreachable: a 10th byte either ends the varint (0 or 1) or overflows above.
    return this.fail(`varint at byte ${start} overflows 64 bits`);
  }

  /** Reads a tag; returns the field number and leaves the wire type in `wire`. */
  wire = 0;
  tag(): number {
    const t = this.varint();
    const field = Math.floor(t / 8);
    this.wire = t % 8;
    if (field === 0) this.fail('field number 0 is not allowed');
    if (field > MAX_FIELD_NUMBER) this.fail(`field number ${field} is above the maximum ${MAX_FIELD_NUMBER}`);
    if (this.wire > WIRE_FIXED32) this.fail(`field ${field} has invalid wire type ${this.wire}`);
    return field;
  }

  /** The value of a known string field whose tag has just been read. */
  string(field: number): string {
    const name = this.fields[field]!;
    if (this.wire !== WIRE_LEN) {
      this.fail(`field ${field} (${name}) has wire type ${this.wire} (${WIRE_NAMES[this.wire]}), expected 2 (length-delimited)`);
    }
    const length = this.varint();
    const buf = this.buf;
    const start = this.pos;
    if (length > buf.length - start) this.pastEnd(`field ${field} (${name}) length ${length}`);
    const end = start + length;
    this.pos = end;
    // Audiences and SPIFFE IDs are ASCII in practice: check that byte by byte and only hand the
    // rest to the UTF-8 validator.
    for (let i = start; i < end; i++) {
      if (buf[i]! >= 0x80) {
        if (!isUtf8(buf.subarray(start, end))) this.fail(`field ${field} (${name}) is not valid UTF-8`);
        return buf.toString('utf8', start, end);
      }
    }
    return buf.toString('latin1', start, end);
  }

  /** Skips the value of an unknown field whose tag has just been read. */
  skip(field: number, depth = 0): void {
    const buf = this.buf;
    switch (this.wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        if (buf.length - this.pos < 8) this.pastEnd(`field ${field} (fixed64)`);
        this.pos += 8;
        return;
      case WIRE_FIXED32:
        if (buf.length - this.pos < 4) this.pastEnd(`field ${field} (fixed32)`);
        this.pos += 4;
        return;
      case WIRE_LEN: {
        const length = this.varint();
        if (length > buf.length - this.pos) this.pastEnd(`field ${field} length ${length}`);
        this.pos += length;
        return;
      }
      case WIRE_START_GROUP: {
        if (depth >= MAX_GROUP_DEPTH) this.fail(`field ${field}: groups nested deeper than ${MAX_GROUP_DEPTH}`);
        for (;;) {
          if (this.pos >= buf.length) this.pastEnd(`field ${field}: group`);
          const inner = this.tag();
          if ((this.wire as number) === WIRE_END_GROUP) {
            if (inner !== field) this.fail(`field ${inner}: end-group does not match the start-group of field ${field}`);
            return;
          }
          this.skip(inner, depth + 1);
        }
      }
      default: // WIRE_END_GROUP outside a group
        this.fail(`field ${field}: end-group without a start-group`);
    }
  }
}

/** The decoded request, shaped as proto-loader's output objects (keepCase, defaults). */
export interface JWTSVIDRequestDecoded {
  audience: string[];
  spiffe_id: string;
}
export interface ValidateJWTSVIDRequestDecoded {
  audience: string;
  svid: string;
}
export type EmptyRequestDecoded = Record<string, never>;

const JWT_SVID_REQUEST_FIELDS = [undefined, 'audience', 'spiffe_id'];
const VALIDATE_REQUEST_FIELDS = [undefined, 'audience', 'svid'];
const NO_FIELDS: (string | undefined)[] = [];

function guarded<T>(decode: (r: Reader) => T, fields: (string | undefined)[]): (buf: Buffer) => T | MalformedRequest {
  return (buf) => {
    try {
      return decode(new Reader(buf, fields));
    } catch (err) {
      if (err instanceof DecodeError) return new MalformedRequest(err.message);
      throw err;
    }
  };
}

/** JWTSVIDRequest{ repeated string audience = 1; string spiffe_id = 2 } */
export const decodeJWTSVIDRequest = guarded<JWTSVIDRequestDecoded>((r) => {
  const audience: string[] = [];
  let spiffeId = '';
  const end = r.buf.length;
  while (r.pos < end) {
    const field = r.tag();
    if (field === 1 && r.wire !== WIRE_END_GROUP) audience.push(r.string(1));
    else if (field === 2 && r.wire !== WIRE_END_GROUP)
      spiffeId = r.string(2); // proto3: the last one wins
    else r.skip(field);
  }
  return { audience, spiffe_id: spiffeId };
}, JWT_SVID_REQUEST_FIELDS);

/** ValidateJWTSVIDRequest{ string audience = 1; string svid = 2 } */
export const decodeValidateJWTSVIDRequest = guarded<ValidateJWTSVIDRequestDecoded>((r) => {
  let audience = '';
  let svid = '';
  const end = r.buf.length;
  while (r.pos < end) {
    const field = r.tag();
    if (field === 1 && r.wire !== WIRE_END_GROUP) audience = r.string(1);
    else if (field === 2 && r.wire !== WIRE_END_GROUP) svid = r.string(2);
    else r.skip(field);
  }
  return { audience, svid };
}, VALIDATE_REQUEST_FIELDS);

/** X509SVIDRequest{}, X509BundlesRequest{}, JWTBundlesRequest{}: only unknown fields, all skipped. */
export const decodeEmptyRequest = guarded<EmptyRequestDecoded>((r) => {
  const end = r.buf.length;
  while (r.pos < end) r.skip(r.tag());
  return {};
}, NO_FIELDS);

/** The strict request decoder of each Workload API method. */
export const STRICT_REQUEST_DECODERS = {
  FetchX509SVID: decodeEmptyRequest,
  FetchX509Bundles: decodeEmptyRequest,
  FetchJWTSVID: decodeJWTSVIDRequest,
  FetchJWTBundles: decodeEmptyRequest,
  ValidateJWTSVID: decodeValidateJWTSVIDRequest,
} as const;
