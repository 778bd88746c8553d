// A variant whose calls failed while its agent stayed up is failed with the cause: the rule's
// thresholds, and the agent log's lines reduced to causes.
import { describe, expect, it } from 'vitest';
import type { VariantResult } from '../../src/contract/index.js';
import { causeOfLogLine, logCauses, stormCodes } from '../../src/scenario/call-causes.js';
import { failedCallChecks } from '../../src/scenario/calls-failed.js';

const base = {
  name: 'off',
  oomKills: 0,
  restarts: 0,
  okRps: 0,
  rejectedRps: 0,
  errorRps: 40,
  deadlineExceededRps: 0,
  callCauses: {
    byCode: { UNAVAILABLE: 400 },
    agentLog: [
      { line: 'attestation of pid N failed: k8s attestor: kubelet GET http://127.0.0.1:<port>/pods failed: connect ENETUNREACH 127.0.0.1:<port>', count: 120 },
    ],
  },
  deaths: [],
  expectations: [],
} as unknown as VariantResult;
const v = (over: Partial<VariantResult>) => ({ ...base, ...over }) as VariantResult;

describe('failedCallChecks', () => {
  it('fails a variant whose storm calls were all errors, naming the client codes and the agent log line', () => {
    const [r] = failedCallChecks(base);
    expect(r).toMatchObject({ name: 'stormCalls', verdict: 'failed', actual: 1, basis: 'measured' });
    expect(r!.message).toBe(
      'every storm call failed with an error while the agent stayed up (none rejected; at the client: UNAVAILABLE 100%); the agent\'s log, most often: "attestation of pid N failed: k8s attestor: kubelet GET http://127.0.0.1:<port>/pods failed: connect ENETUNREACH 127.0.0.1:<port>" (120 lines)',
    );
  });

  it('judges from 90% errors; not below, not with rejections, not when the agent died, not under faults, not for deadlines', () => {
    expect(failedCallChecks(v({ okRps: 4, errorRps: 36 }))[0]!.message).toMatch(/^90% of the storm calls failed/);
    expect(failedCallChecks(v({ okRps: 5, errorRps: 35 }))).toEqual([]);
    expect(failedCallChecks(v({ rejectedRps: 1 }))).toEqual([]);
    expect(failedCallChecks(v({ oomKills: 1 }))).toEqual([]);
    expect(failedCallChecks(v({ restarts: 2 }))).toEqual([]);
    expect(failedCallChecks(v({ deaths: [{ rep: 1, atMs: 900, phase: 'load', cause: 'fault-kill', detail: 'agent-kill', counted: false }] }))).toEqual([]);
    // A fault's errors (a frozen agent refuses connections) are the fault's, judged by its recovery.
    expect(failedCallChecks(v({ faults: [{ rep: 1, action: 'agent-pause' } as never] }))).toEqual([]);
    expect(failedCallChecks(v({ errorRps: 0, deadlineExceededRps: 40 }))).toEqual([]);
    expect(failedCallChecks(v({ error: 'agent did not start' }))).toEqual([]);
    expect(failedCallChecks(v({ notJudged: 'machine too slow' }))).toEqual([]);
  });

  it('fails bystanders that never succeeded with errors; not when they timed out behind a collapsing agent', () => {
    const ok = v({ okRps: 40, errorRps: 0 });
    const erring = failedCallChecks(
      v({ ...ok, bystanders: { calls: 20, ok: 0, successRatio: 0, p50Ms: null, p99Ms: null, longestGapMs: 5000, byStatus: { UNAVAILABLE: 20 } } }),
    );
    expect(erring.map((e) => [e.name, e.message.split(';')[0]])).toEqual([
      ['bystanderCalls', 'no bystander call succeeded (0 of 20) while the agent stayed up'],
    ]);
    const timedOut = v({
      ...ok,
      bystanders: { calls: 20, ok: 0, successRatio: 0, p50Ms: null, p99Ms: null, longestGapMs: 5000, byStatus: { DEADLINE_EXCEEDED: 20 } },
    });
    expect(failedCallChecks(timedOut)).toEqual([]);
  });
});

describe('agent log causes', () => {
  it('masks pids, ports, numbers and ids but keeps addresses, so one cause is one line', () => {
    const a = causeOfLogLine(
      'attestorm agent: attestation of pid 6343 failed: k8s attestor: kubelet GET http://127.0.0.1:34819/pods failed: connect ECONNREFUSED 127.0.0.1:34819',
    );
    const b = causeOfLogLine(
      'attestorm agent: attestation of pid 7 failed: k8s attestor: kubelet GET http://127.0.0.1:4000/pods failed: connect ECONNREFUSED 127.0.0.1:4000',
    );
    expect(a).toBe('attestation of pid N failed: k8s attestor: kubelet GET http://127.0.0.1:<port>/pods failed: connect ECONNREFUSED 127.0.0.1:<port>');
    expect(b).toBe(a);
    expect(
      causeOfLogLine(
        'attestorm agent: attestation of pid 9 failed: k8s attestor: container 54053a10d16c422c0113e86041754069d2f024756441fecbcfb9e38b0f773029 of pod 20c21a0a-ee19-4d9a-8ef7-ea0ac726882b not found in kubelet pod list after 2 attempts',
      ),
    ).toBe('attestation of pid N failed: k8s attestor: container <id> of pod <uid> not found in kubelet pod list after N attempts');
  });

  it("reads SPIRE's logfmt errors by msg and error; ignores ready lines, info lines and the throttle's notices", () => {
    expect(
      causeOfLogLine(
        'time="2026-01-01T00:00:00Z" level=error msg="Failed to attest the workload" error="rpc error: code = DeadlineExceeded desc = took 1500ms" pid=123',
      ),
    ).toBe('Failed to attest the workload: rpc error: code = DeadlineExceeded desc = took Nms');
    expect(causeOfLogLine('time="2026-01-01T00:00:00Z" level=info msg="Starting Workload and SDS APIs" error="none"')).toBeNull();
    expect(causeOfLogLine('{"event":"ready","pid":1,"socket":"/run/a.sock"}')).toBeNull();
    expect(causeOfLogLine('attestorm agent: (412 similar lines dropped)')).toBeNull();
    expect([...logCauses('attestorm agent: x failed: 1\nattestorm agent: x failed: 2\nattestorm agent: SIGTERM, draining\n')]).toEqual([['x failed: N', 2]]);
  });

  it('sums the storm codes of the load lines only, past a torn last line', () => {
    const text = [
      '{"kind":"event","type":"phase","phase":"load","t":0}',
      '{"kind":"load","t":0,"byCode":{"OK":3,"UNAVAILABLE":1}}',
      '{"kind":"bystanders","t":0,"byCode":{"OK":9}}',
      '{"kind":"load","t":1000,"byCode":{"UNAVAILABLE":5}}',
      '{"kind":"load","t":2000,"byCo',
    ].join('\n');
    expect(stormCodes(text)).toEqual({ OK: 3, UNAVAILABLE: 6 });
  });
});
