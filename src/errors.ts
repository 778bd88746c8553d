// Every error attestorm raises on purpose: one base class with a stable code, so the CLI can map
// codes to exit statuses and tests can assert on codes rather than on message wording.

export type ErrorCode =
  | 'ATTESTORM_ERR_CONFIG' // bad flags, bad YAML, bad scenario: found before anything starts
  | 'ATTESTORM_ERR_PLATFORM' // the machine lacks something required (SO_PEERCRED, cgroups, ...)
  | 'ATTESTORM_ERR_CHILD' // a child process failed to start, or died when it must not
  | 'ATTESTORM_ERR_TIMEOUT' // something did not become ready in time
  | 'ATTESTORM_ERR_RUN' // a run could not be carried out
  | 'ATTESTORM_ERR_IO' // reading or writing a run folder failed
  | 'ATTESTORM_ERR_UNSAFE_PATH' // a folder another user controls, or a symlink where a run file goes
  | 'ATTESTORM_ERR_PREFLIGHT' // this machine lacks what every run needs: each failure below, nothing started
  | PreflightCode;

/** What a run needs of the machine it runs on, checked before any agent starts: one code per need. */
export type PreflightCode =
  | 'ATTESTORM_ERR_RUNTIME_DIR_SOCKETS' // the runtime folder cannot hold a Unix socket (a 9p, NFS or vfat mount)
  | 'ATTESTORM_ERR_LOOPBACK' // 127.0.0.1 cannot be reached: the loopback interface is down
  | 'ATTESTORM_ERR_KUBELET_UNREACHABLE' // the kubelet emulator does not answer GET /pods where the agent calls it
  | 'ATTESTORM_ERR_METRICS_UNREACHABLE' // an endpoint on the agent's metrics address does not answer the runner
  | 'ATTESTORM_ERR_SPIRE_BINARY'; // a SPIRE variant's spire-server or spire-agent is missing or does not run here

export class AttestormError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Invalid input. `problems` lists every violation, each naming the input path and the rule. */
export class ConfigError extends AttestormError {
  readonly problems: string[];
  constructor(problems: string[] | string, options?: { cause?: unknown }) {
    const list = Array.isArray(problems) ? problems : [problems];
    super('ATTESTORM_ERR_CONFIG', list.length === 1 ? list[0]! : `invalid input:\n  - ${list.join('\n  - ')}`, options);
    this.problems = list;
  }
}

export class PlatformError extends AttestormError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ATTESTORM_ERR_PLATFORM', message, options);
  }
}

export class ChildProcessError extends AttestormError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ATTESTORM_ERR_CHILD', message, options);
  }
}

export class TimeoutError extends AttestormError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ATTESTORM_ERR_TIMEOUT', message, options);
  }
}

/**
 * The storm's pods could not start within their start-up time: a machine too slow or too busy for
 * the storm asked of it (an emulated guest, a loaded runner), which says nothing of the agents, so
 * the variant is inconclusive, not failed.
 */
export class SlowStartError extends TimeoutError {}

/** The SlowStartError behind err, following causes, or null. */
export function slowStartOf(err: unknown): SlowStartError | null {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof SlowStartError) return e;
  return null;
}

export class RunError extends AttestormError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ATTESTORM_ERR_RUN', message, options);
  }
}

/** A path attestorm refuses to use: another user's, writable by others, or a symlink. Exit 3, before anything starts. */
export class UnsafePathError extends AttestormError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ATTESTORM_ERR_UNSAFE_PATH', message, options);
  }
}

/** One thing the machine lacks, with what fixes it (a command or a variable). */
export class PreflightFailure extends AttestormError {
  declare readonly code: PreflightCode;
  /** The command or variable that fixes it, as the user would type it. */
  readonly fix: string;
  constructor(code: PreflightCode, message: string, fix: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.fix = fix;
  }

  /** The failure and its fix in one line, with its code. */
  line(): string {
    return `${this.message}; fix: ${this.fix} [${this.code}]`;
  }
}

/** Every preflight failure of a run at once. Exit 2 like bad input: nothing was started, no run folder written. */
export class PreflightError extends AttestormError {
  readonly failures: PreflightFailure[];
  constructor(failures: PreflightFailure[]) {
    super(
      'ATTESTORM_ERR_PREFLIGHT',
      failures.length === 1
        ? `this machine cannot hold the run (nothing was started): ${failures[0]!.line()}`
        : `this machine cannot hold the run (nothing was started):\n  - ${failures.map((f) => f.line()).join('\n  - ')}`,
    );
    this.failures = failures;
  }
}

/**
 * Exit statuses of the CLI, documented in the README. CI keys on these.
 * 0 all expectations met (or nothing judged, a comparison); 1 expectations failed; 2 invalid input,
 * or a machine that lacks what every run needs (a preflight failure; nothing started); 3 run could
 * not be carried out; 4 no expectation judged where requireExpectations asks for one.
 */
export const EXIT = {
  OK: 0,
  EXPECTATIONS_FAILED: 1,
  INVALID_INPUT: 2,
  RUN_FAILED: 3,
  NOT_JUDGED: 4,
  INTERRUPTED: 130,
} as const;

export function exitCodeFor(err: unknown): number {
  if (err instanceof ConfigError || err instanceof PreflightError) return EXIT.INVALID_INPUT;
  return EXIT.RUN_FAILED;
}
