import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { METHODS } from '../../src/proto/index.js';
import { loadOptionsSchema, parseMethodMix, validateLoadOptions } from '../../src/load/index.js';
import { backoffDelayMs, classify, makePicker } from '../../src/load/worker/policy.js';
import { METHOD_PATHS, decodeFirstJwtSvid, encodeJwtSvidRequest, encodeValidateRequest } from '../../src/load/worker/wire.js';
import { workloadService } from '../../src/proto/index.js';
import { configProblems } from '../support/config-problems.js';

const problems = (input: unknown): string[] => configProblems(() => validateLoadOptions(input));

describe('validateLoadOptions', () => {
  it('fills defaults', () => {
    const o = validateLoadOptions({ socket: '/tmp/a.sock', pods: 2, workersPerPod: 3, durationMs: 5000 });
    expect(o).toMatchObject({
      connection: 'per-call',
      client: 'h2',
      deadlineMs: 1000,
      retry: 'immediate',
      audience: 'attestorm',
      methods: { FetchJWTSVID: 1 },
    });
    expect(o.rate).toBeUndefined();
  });

  it('lists every problem, each naming the key and the rule', () => {
    const p = problems({
      socket: '',
      pods: 0,
      workersPerPod: 2.5,
      durationMs: 10,
      connection: 'per-thread',
      rate: -1,
      retry: 'never',
      methods: { FetchJWTSVID: 0 },
      audience: '',
    });
    const text = p.join('\n');
    expect(text).toMatch(/load\.socket: must be a non-empty path/);
    expect(text).toMatch(/load\.pods: must be at least 1, got 0/);
    expect(text).toMatch(/load\.workersPerPod: must be an integer, got 2\.5/);
    expect(text).toMatch(/load\.durationMs: must be at least 100 ms, got 10/);
    expect(text).toMatch(/load\.connection: must be one of per-call, per-worker, per-retry, got "per-thread"/);
    expect(text).toMatch(/load\.rate: must be a positive number/);
    expect(text).toMatch(/load\.retry: must be one of immediate, backoff/);
    expect(text).toMatch(/load\.methods: must give at least one method a weight above 0/);
    expect(text).toMatch(/load\.audience: must be non-empty/);
  });

  it('rejects unknown methods and keys, and storms beyond the process bound', () => {
    expect(problems({ socket: '/s', methods: { FetchEverything: 1 } }).join('\n')).toMatch(/load\.methods/);
    expect(problems({ socket: '/s', workers: 3 }).join('\n')).toMatch(/unknown key\(s\) workers/);
    expect(problems({ socket: '/s', pods: 10, workersPerPod: 1000 }).join('\n')).toMatch(/pods × workersPerPod must be at most 5000 processes, got 10 × 1000/);
    expect(problems({ socket: `/${'x'.repeat(120)}` }).join('\n')).toMatch(/at most 107 bytes/);
  });

  it('takes any worker client and names the choices otherwise', () => {
    expect(validateLoadOptions({ socket: '/s', client: 'grpc-js' }).client).toBe('grpc-js');
    expect(validateLoadOptions({ socket: '/s', client: 'native' }).client).toBe('native');
    expect(problems({ socket: '/s', client: 'grpc-go' }).join('\n')).toMatch(/load\.client: must be one of h2, grpc-js, native, got "grpc-go"/);
    expect(loadOptionsSchema.shape.client.description).toMatch(/node:http2/);
  });

  it('names a custom input in the problems', () => {
    try {
      validateLoadOptions({ socket: '/s', pods: -1 }, 'scenario.load');
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems[0]).toMatch(/^scenario\.load\.pods: must be at least 1, got -1$/);
    }
  });
});

describe('parseMethodMix', () => {
  it('reads Method and Method=weight, repeated or comma-separated', () => {
    expect(parseMethodMix(['FetchJWTSVID=9', 'ValidateJWTSVID=1'])).toEqual({ FetchJWTSVID: 9, ValidateJWTSVID: 1 });
    expect(parseMethodMix(['FetchJWTSVID,FetchX509SVID=2'])).toEqual({ FetchJWTSVID: 1, FetchX509SVID: 2 });
  });

  it('names the flag and the rule', () => {
    expect(() => parseMethodMix(['FetchJWT=x'])).toThrow(/--method must be Method or Method=weight \(e\.g\. FetchJWTSVID=9\), got "FetchJWT=x"/);
    expect(() => parseMethodMix(['Nope'])).toThrow(/--method must name one of FetchJWTSVID, .*got "Nope"/);
  });
});

describe('worker wire and policy', () => {
  it('the worker method paths agree with the proto', () => {
    expect(METHOD_PATHS).toEqual(METHODS);
  });

  it('hand-encoded requests decode as the proto messages', () => {
    const svc = workloadService();
    expect(svc.FetchJWTSVID.requestDeserialize(encodeJwtSvidRequest('aud-1'))).toMatchObject({ audience: ['aud-1'], spiffe_id: '' });
    expect(svc.ValidateJWTSVID.requestDeserialize(encodeValidateRequest('a', 'x'.repeat(300)))).toMatchObject({ audience: 'a', svid: 'x'.repeat(300) });
    const response = svc.FetchJWTSVID.responseSerialize({ svids: [{ spiffe_id: 'spiffe://td/w', svid: 'tok.en.sig', hint: 'h' }] });
    expect(decodeFirstJwtSvid(response)).toBe('tok.en.sig');
    expect(decodeFirstJwtSvid(Buffer.alloc(0))).toBeNull();
  });

  it('classifies both limiter designs as rate-limited, and nothing else', () => {
    expect(classify(0, '')).toBe('ok');
    expect(classify(14, 'rate limit exceeded for /SpiffeWorkloadAPI/FetchJWTSVID')).toBe('rateLimited');
    expect(classify(8, 'rate limit exceeded')).toBe('rateLimited');
    expect(classify(14, 'workload attestation failed')).toBe('error');
    expect(classify(8, 'out of memory')).toBe('error');
    expect(classify(4, 'Deadline exceeded')).toBe('deadlineExceeded');
    expect(classify(7, 'no identity issued')).toBe('error');
  });

  it('backoff is exponential with full jitter, capped', () => {
    expect(backoffDelayMs(1, () => 0.999)).toBeCloseTo(99.9, 1);
    expect(backoffDelayMs(3, () => 0.5)).toBe(200);
    expect(backoffDelayMs(40, () => 0.999)).toBeCloseTo(4995, 0);
    expect(backoffDelayMs(5, () => 0)).toBe(0);
  });

  it('picks methods by weight', () => {
    const pick = makePicker<string>([
      ['a', 9],
      ['b', 1],
    ]);
    expect(pick(0)).toBe('a');
    expect(pick(0.89)).toBe('a');
    expect(pick(0.91)).toBe('b');
    expect(pick(0.99999)).toBe('b');
  });
});
