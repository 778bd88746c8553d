// The agent's hand-written wire codecs against protobufjs (the proto-loader definitions): the strict
// request decoders agree with it on every well-formed message and refuse what grpc-go refuses;
// the JWTSVIDResponse encoder's bytes decode to the same message.
import { describe, expect, it } from 'vitest';
import { encodeJWTSVIDResponse, MalformedRequest, STRICT_REQUEST_DECODERS, workloadService } from '../../src/proto/index.js';

const hex = (h: string) => Buffer.from(h.replace(/ /g, ''), 'hex');
const svc = workloadService() as unknown as Record<
  string,
  { requestSerialize(v: object): Buffer; requestDeserialize(b: Buffer): object; responseSerialize(v: object): Buffer; responseDeserialize(b: Buffer): object }
>;

function problemOf(v: unknown): string {
  if (!(v instanceof MalformedRequest)) throw new Error(`expected a MalformedRequest, got ${JSON.stringify(v)}`);
  return v.problem;
}

describe('strict request decoders', () => {
  it('agree with protobufjs on well-formed requests of every method', () => {
    const requests: Array<[keyof typeof STRICT_REQUEST_DECODERS, object]> = [
      ['FetchJWTSVID', { audience: ['a', 'bé', ''], spiffe_id: 'spiffe://example.org/x' }],
      ['FetchJWTSVID', { audience: [], spiffe_id: '' }],
      ['ValidateJWTSVID', { audience: 'aud', svid: 'x'.repeat(5000) }],
      ['FetchX509SVID', {}],
      ['FetchX509Bundles', {}],
      ['FetchJWTBundles', {}],
    ];
    for (const [method, req] of requests) {
      const bytes = svc[method]!.requestSerialize(req);
      expect(STRICT_REQUEST_DECODERS[method](bytes), method).toEqual(svc[method]!.requestDeserialize(bytes));
    }
  });

  it('reads a non-minimal tag varint and a multi-byte length', () => {
    const long = 'y'.repeat(200);
    const bytes = Buffer.concat([hex('8a 00 c8 01'), Buffer.from(long)]); // field 1 as a 2-byte tag, length 200
    expect(STRICT_REQUEST_DECODERS.FetchJWTSVID(bytes)).toEqual({ audience: [long], spiffe_id: '' });
  });

  it('refuses a varint overflowing 64 bits (its 10th byte above 1, or an 11th byte)', () => {
    expect(problemOf(STRICT_REQUEST_DECODERS.FetchX509SVID(hex('58 ff ff ff ff ff ff ff ff ff ff 01')))).toBe('varint at byte 1 overflows 64 bits');
    expect(problemOf(STRICT_REQUEST_DECODERS.FetchX509SVID(hex('58 ff ff ff ff ff ff ff ff ff 02')))).toBe('varint at byte 1 overflows 64 bits');
  });

  it('skips nested unknown groups and refuses a mismatched end-group', () => {
    // field 11 group { field 12 group { field 13 varint } } then field 1 audience "a"
    expect(STRICT_REQUEST_DECODERS.FetchJWTSVID(hex('5b 63 68 01 64 5c 0a 01 61'))).toEqual({ audience: ['a'], spiffe_id: '' });
    expect(problemOf(STRICT_REQUEST_DECODERS.FetchJWTSVID(hex('5b 64')))).toBe('field 12: end-group does not match the start-group of field 11');
  });

  it('refuses a known field sent as a group (wire type 3)', () => {
    expect(problemOf(STRICT_REQUEST_DECODERS.ValidateJWTSVID(hex('13 14')))).toBe(
      'field 2 (svid) has wire type 3 (start-group), expected 2 (length-delimited)',
    );
  });

  it('accepts multi-byte UTF-8 and refuses an overlong encoding and a lone surrogate', () => {
    expect(STRICT_REQUEST_DECODERS.ValidateJWTSVID(Buffer.concat([hex('0a 04'), Buffer.from('aé€')]).subarray(0, 6))).toBeInstanceOf(MalformedRequest);
    expect(STRICT_REQUEST_DECODERS.ValidateJWTSVID(Buffer.concat([hex('0a 06'), Buffer.from('aé€')]))).toEqual({ audience: 'aé€', svid: '' });
    expect(problemOf(STRICT_REQUEST_DECODERS.ValidateJWTSVID(hex('0a 02 c0 af')))).toBe('field 1 (audience) is not valid UTF-8');
    expect(problemOf(STRICT_REQUEST_DECODERS.ValidateJWTSVID(hex('12 03 ed a0 80')))).toBe('field 2 (svid) is not valid UTF-8');
  });
});

describe('JWTSVIDResponse encoder', () => {
  it('decodes to the same message as protobufjs bytes', () => {
    const ser = svc.FetchJWTSVID!;
    const cases = [
      { svids: [] },
      { svids: [{ spiffe_id: 'spiffe://example.org/a', svid: 'x'.repeat(300), hint: '' }] },
      {
        svids: [
          { spiffe_id: 'spiffe://example.org/é', svid: 'ü'.repeat(70), hint: 'h' },
          { spiffe_id: '', svid: 'y'.repeat(20_000), hint: 'hint' },
        ],
      },
    ];
    for (const c of cases) {
      expect(ser.responseDeserialize(encodeJWTSVIDResponse(c))).toEqual(ser.responseDeserialize(ser.responseSerialize(c)));
    }
  });
});
