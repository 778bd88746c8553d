// Every error attestorm raises on purpose: one base class with a stable code, so the CLI can map
// codes to exit statuses and tests can assert on codes rather than on message wording.

export type ErrorCode =
  | 'ATTESTORM_ERR_CONFIG' // bad flags, bad YAML, bad scenario: found before anything starts
  | 'ATTESTORM_ERR_PLATFORM' // the machine lacks something required (SO_PEERCRED, cgroups, ...)
  | 'ATTESTORM_ERR_CHILD' // a child process failed to start, or died when it must not
  | 'ATTESTORM_ERR_TIMEOUT' // something did not become ready in time
  | 'ATTESTORM_ERR_RUN' // a run could not be carried out
  | 'ATTESTORM_ERR_IO' // reading or writing a run folder failed
  | 'ATTESTORM_ERR_UNSAFE_PATH'; // a folder another user controls, or a symlink where a run file goes

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

/**
 * Exit statuses of the CLI, documented in the README. CI keys on these.
 * 0 all expectations met; 1 expectations failed; 2 invalid input; 3 run could not be carried out.
 */
export const EXIT = {
  OK: 0,
  EXPECTATIONS_FAILED: 1,
  INVALID_INPUT: 2,
  RUN_FAILED: 3,
  INTERRUPTED: 130,
} as const;

export function exitCodeFor(err: unknown): number {
  if (err instanceof ConfigError) return EXIT.INVALID_INPUT;
  return EXIT.RUN_FAILED;
}
