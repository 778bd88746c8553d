// The per-call path of the Workload API, composed once at start from the config:
//   security header → [limit: pre-attestation] → request checks → attestation → caller check
//   → [limit: post-attestation] → entry matching → the method's handler.
// The limiter stage is one function; the placement only decides which slot it is composed into.
import { status } from '@grpc/grpc-js';
import type { Metadata } from '@grpc/grpc-js';
import type { PlacementName } from '../contract/index.js';
import { SECURITY_HEADER } from '../proto/index.js';
import type { AgentConfig } from './config.js';
import type { AgentMetrics } from './metrics.js';
import { readStartTimeSync, readStatusSync, type ProcStatus } from './procfs.js';
import type { Attestor, CallerCreds, IdentityIssuer, KeyContext, KeyStrategy, LimitMethodKey, RateLimiter, RegistrationEntry, Selector } from './types.js';

/** Ends a call with a gRPC status and details string (the way grpc-js interceptors end calls). */
export class CallError extends Error {
  readonly code: status;
  constructor(code: status, details: string) {
    // No stack trace: a CallError is an answer, not a bug, and capturing a stack on every
    // rejected call showed up in profiles of a rate-limit storm.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(details);
    Error.stackTraceLimit = limit;
    this.code = code;
  }
}

/** Everything the stages learn about one call. Created by the handler binding, filled in by stages. */
export interface CallContext {
  /** Method name, e.g. "FetchJWTSVID" (the metric label). */
  readonly method: string;
  /** Full path, e.g. "/SpiffeWorkloadAPI/FetchJWTSVID" (in the rejection message). */
  readonly path: string;
  readonly limitKey: LimitMethodKey;
  readonly metadata: Metadata;
  readonly caller: CallerCreds;
  /** The client cancelled or disconnected. */
  readonly cancellation: Cancellation;
  /** Whether the call fails with PermissionDenied when no entry matches (not for ValidateJWTSVID). */
  readonly needsIdentity: boolean;
  /** The method's own request checks (audience, spiffe_id...) of `request`; run after a pre-attestation limiter. */
  readonly checkRequest?: (request: unknown) => void;
  /** The decoded request message. */
  readonly request?: unknown;
  /** Set by the attestation stage. */
  selectors: Selector[];
  /** Set on first use of entries(). */
  matched?: RegistrationEntry[];
}

/**
 * A call's cancellation, read from grpc-js's own call object rather than an AbortController: one
 * of those per call showed up in profiles, and only cancelAbandoned ever listens.
 */
export interface Cancellation {
  readonly cancelled: boolean;
  /** Runs fn once when the client cancels; returns the unsubscribe. */
  onCancel(fn: () => void): () => void;
}

export type Stage = (ctx: CallContext) => void | Promise<void>;

/**
 * Runs a composed pipeline. Synchronous as long as its stages are: returns undefined when every
 * stage passed without waiting, throws CallError when a synchronous stage refused the call (a
 * pre-attestation rejection never touches a promise), and otherwise returns a promise that
 * resolves when the call may be answered or rejects with CallError.
 */
export type Pipeline = (ctx: CallContext) => void | Promise<void>;

export interface PipelineDeps {
  cfg: AgentConfig;
  attestors: readonly Attestor[];
  issuer: IdentityIssuer;
  metrics: AgentMetrics;
  /** Absent when the placement is disabled. */
  limiter?: RateLimiter;
  keyStrategy?: KeyStrategy;
  /** Diagnostics for failed attestations; throttled by the caller. */
  log?: (message: string) => void;
  /** The pid whose calls are the agent's own (its health check): the limiter lets them through. */
  agentPid?: number | null;
}

const HEADER_MISSING = 'security header missing from request';
const ATTESTATION_FAILED = 'workload attestation failed';
const CALLER_GONE = 'could not verify existence of the original caller';
const NO_IDENTITY = 'no identity issued';
const PAGE = 4096;

/** Entries the caller's selectors entitle it to, matched once per call. */
export function entriesOf(ctx: CallContext, issuer: IdentityIssuer): RegistrationEntry[] {
  return (ctx.matched ??= issuer.match(ctx.selectors));
}

/** The slots a placement puts the limiter stage into. Adding a placement is one line here. */
const PLACEMENT_SLOTS: Record<PlacementName, 'beforeAttestation' | 'afterAttestation' | null> = {
  'pre-attestation': 'beforeAttestation',
  'post-attestation': 'afterAttestation',
  disabled: null,
};

export function composePipeline(deps: PipelineDeps): Pipeline {
  const slots: Record<'beforeAttestation' | 'afterAttestation', Stage[]> = { beforeAttestation: [], afterAttestation: [] };
  const slot = PLACEMENT_SLOTS[deps.cfg.rateLimit.placement];
  if (slot && deps.limiter && deps.keyStrategy) {
    slots[slot].push(limitStage(deps.limiter, deps.keyStrategy, deps.cfg, deps.metrics, deps.issuer, deps.agentPid ?? null));
  }
  const stages: Stage[] = [
    checkSecurityHeader,
    ...slots.beforeAttestation,
    checkRequest,
    attestStage(deps),
    verifyCallerStage(deps.cfg.procRoot),
    ...slots.afterAttestation,
    requireIdentity(deps.issuer),
  ];
  const rest = async (ctx: CallContext, pending: Promise<void>, from: number): Promise<void> => {
    await pending;
    for (let i = from; i < stages.length; i++) {
      const next = stages[i]!(ctx);
      if (next) await next;
    }
  };
  return (ctx) => {
    // Synchronous stages stay synchronous: no promise round trip for the header or limiter checks.
    for (let i = 0; i < stages.length; i++) {
      const pending = stages[i]!(ctx);
      if (pending) return rest(ctx, pending, i + 1);
    }
    return undefined;
  };
}

/** `workload.spiffe.io: true`, exactly one value, on every Workload API call. */
export const checkSecurityHeader: Stage = (ctx) => {
  const values = ctx.metadata.get(SECURITY_HEADER);
  if (values.length !== 1 || values[0] !== 'true') throw new CallError(status.INVALID_ARGUMENT, HEADER_MISSING);
};

const checkRequest: Stage = (ctx) => ctx.checkRequest?.(ctx.request);

/**
 * The one limiter stage, whichever slot it sits in. Methods whose limit is 0 skip it entirely
 * (ValidateJWTSVID by default, as in SPIRE), so exempt calls never pay for a key. So do the
 * agent's own calls (pid agentPid): as in SPIRE, a limit must not make the agent's health check,
 * which fetches from its own socket, report it unhealthy.
 */
export function limitStage(
  limiter: RateLimiter,
  strategy: KeyStrategy,
  cfg: AgentConfig,
  metrics: AgentMetrics,
  issuer: IdentityIssuer,
  agentPid: number | null = null,
): Stage {
  const limited = new Set((Object.entries(cfg.rateLimit.limits) as [LimitMethodKey, number][]).filter(([, n]) => n > 0).map(([m]) => m));
  const rejectCode = cfg.rateLimit.rejectStatus === 'resource-exhausted' ? status.RESOURCE_EXHAUSTED : status.UNAVAILABLE;
  // One rejection per method path, made once: in a storm most calls end here, and nothing reads
  // or changes a CallError after it is thrown.
  const rejections = new Map<string, CallError>();
  const rejection = (path: string): CallError => {
    let e = rejections.get(path);
    if (!e) rejections.set(path, (e = new CallError(rejectCode, `rate limit exceeded for ${path}`)));
    return e;
  };
  return (ctx) => {
    if (!limited.has(ctx.limitKey) || ctx.caller.pid === agentPid) return;
    const keyCtx: KeyContext = strategy.needsSelectors
      ? {
          caller: ctx.caller,
          selectors: ctx.selectors,
          get spiffeIds() {
            return entriesOf(ctx, issuer).map((e) => e.spiffeId);
          },
        }
      : { caller: ctx.caller };
    const { key, keyType } = strategy.key(keyCtx);
    if (limiter.allow(ctx.limitKey, key)) return;
    metrics.rateLimited(ctx.method, keyType);
    throw rejection(ctx.path);
  };
}

/**
 * Runs every configured attestor and concatenates their selectors. Two modeled behaviours:
 * - model.attestationWorkingSet: each attestation holds a buffer of that size, touched page by page
 *   so it is resident, until it ends — the stand-in for a real attestor's per-call allocations
 *   (parsed pod lists, hashes) when the reference agent's own attestors are cheaper than a real one.
 * - model.cancelAbandoned (default true, as SPIRE binds attestation to the call's context): a call
 *   whose caller went away stops waiting and releases its working set at once; shared attestor I/O
 *   (the kubelet fetch other callers wait on too) still finishes. false: the attestation runs on, as
 *   in older agents, while the caller's retry starts another.
 */
export function attestStage(deps: PipelineDeps): Stage {
  const { attestors, metrics } = deps;
  const workingSetBytes = deps.cfg.model.attestationWorkingSet;
  const cancelAbandoned = deps.cfg.model.cancelAbandoned;
  const log = deps.log ?? (() => {});
  const runAll = async (caller: CallerCreds): Promise<Selector[]> => {
    if (attestors.length === 1) return attestors[0]!.attest(caller);
    const lists = await Promise.all(attestors.map((a) => a.attest(caller)));
    return lists.flat();
  };
  return async (ctx) => {
    const end = metrics.attestationStarted();
    let workingSet: Buffer | null = null;
    if (workingSetBytes > 0) {
      workingSet = Buffer.allocUnsafe(workingSetBytes);
      for (let i = 0; i < workingSetBytes; i += PAGE) workingSet[i] = 1;
    }
    try {
      const work = runAll(ctx.caller);
      ctx.selectors = cancelAbandoned ? await untilCancelled(work, ctx.cancellation) : await work;
    } catch (err) {
      if (ctx.cancellation.cancelled) throw new CallError(status.CANCELLED, 'caller went away during attestation');
      log(`attestation of pid ${ctx.caller.pid} failed: ${(err as Error)?.message ?? String(err)}`);
      throw new CallError(status.UNAVAILABLE, ATTESTATION_FAILED);
    } finally {
      // Reading the buffer here keeps it reachable until the attestation has really ended.
      if (workingSet) workingSet[0] = 0;
      end();
    }
  };
}

function untilCancelled<T>(work: Promise<T>, c: Cancellation): Promise<T> {
  if (c.cancelled) {
    work.catch(() => {});
    return Promise.reject(new Error('cancelled'));
  }
  return new Promise<T>((resolve, reject) => {
    const off = c.onCancel(() => reject(new Error('cancelled')));
    work.then(
      (v) => (off(), resolve(v)),
      (e) => (off(), reject(e)),
    );
  });
}

/**
 * Guards against PID reuse: after attestation, the process that connected must still exist with
 * the start time noted at accept and the same uid/gid, or the selectors may describe someone else.
 */
export function verifyCallerStage(procRoot: string): Stage {
  // Synchronous procfs reads: this runs on every admitted call, and two in-memory files cost less
  // read directly than through the thread pool and its promises.
  return (ctx) => {
    const c = ctx.caller;
    if (c.startTime === null) throw new CallError(status.UNAUTHENTICATED, CALLER_GONE);
    const startTime = readStartTimeSync(procRoot, c.pid);
    let proc: ProcStatus | null;
    try {
      proc = readStatusSync(procRoot, c.pid);
    } catch {
      proc = null;
    }
    if (startTime !== c.startTime || proc === null || proc.uid !== c.uid || proc.gid !== c.gid) {
      throw new CallError(status.UNAUTHENTICATED, CALLER_GONE);
    }
  };
}

function requireIdentity(issuer: IdentityIssuer): Stage {
  return (ctx) => {
    if (ctx.needsIdentity && entriesOf(ctx, issuer).length === 0) {
      throw new CallError(status.PERMISSION_DENIED, NO_IDENTITY);
    }
  };
}
