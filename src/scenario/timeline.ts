// The repetition's timeline: t = ms since the load phase's start. Until that start is known (the
// agent is not ready yet) events are held with their wall-clock time and written once it is fixed.
// The local and the cluster platform both mark phases and events through it.
import type { EventSample, Phase, SampleLine } from '../contract/index.js';

export class Timeline {
  #origin: number | null = null;
  #held: Array<{ at: number; line: Omit<EventSample, 't'> }> = [];
  /** Wall-clock start of every phase entered, to tell which phase a moment fell in. */
  #phases: Array<{ at: number; phase: Phase }> = [];
  phase: Phase = 'starting-pods';
  constructor(private readonly emitLine: (line: SampleLine) => void) {}
  t(at = Date.now()): number {
    return at - (this.#origin ?? at);
  }
  event(type: EventSample['type'], detail?: string, at = Date.now()): void {
    this.#line({ kind: 'event', type, ...(detail ? { detail } : {}) }, at);
  }
  enter(phase: Phase, at = Date.now()): void {
    this.phase = phase;
    this.#phases.push({ at, phase });
    this.#line({ kind: 'event', type: 'phase', phase }, at);
  }
  /** The phase the wall-clock moment `at` fell in (the first phase before any was entered). */
  phaseAt(at: number): Phase {
    let found: Phase = this.#phases[0]?.phase ?? 'starting-pods';
    for (const p of this.#phases) if (p.at <= at) found = p.phase;
    return found;
  }
  fix(origin: number): void {
    this.#origin = origin;
    for (const h of this.#held.splice(0)) this.emitLine({ ...h.line, t: h.at - origin } as EventSample);
  }
  get fixed(): boolean {
    return this.#origin !== null;
  }
  #line(line: Omit<EventSample, 't'>, at: number): void {
    if (this.#origin === null) this.#held.push({ at, line });
    else this.emitLine({ ...line, t: this.t(at) } as EventSample);
  }
}
