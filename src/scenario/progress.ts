// Live progress on stderr: one rewritten status line on a TTY, plain periodic lines otherwise (CI
// logs). Fed by the same sample lines that go to disk, so it shows what the data will say. Lines fit
// the terminal (terminalColumns): a status line that wrapped could not be rewritten in place.
import { formatMiB, terminalColumns, wrapText } from '../util/index.js';
import type { SampleLine } from '../contract/index.js';

export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  /** Force TTY or plain mode; default: the stream's isTTY. */
  tty?: boolean;
  /** Plain mode: seconds between lines. */
  plainEverySeconds?: number;
  /** Columns to fit; default terminalColumns(stream). */
  columns?: number;
}

export class Progress {
  readonly #out: NodeJS.WriteStream;
  readonly #tty: boolean;
  readonly #plainEveryMs: number;
  readonly #columns: number;
  #label = '';
  #totalMs = 0;
  #t = 0;
  /** t of the first load second: pods take a while to come up after the load phase starts. */
  #callsFrom: number | null = null;
  #mem = 0;
  #limit = 0;
  #ok = 0;
  #rejected = 0;
  #failed = 0;
  #restarts = 0;
  #ooms = 0;
  #lastPlain = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(opts: ProgressOptions = {}) {
    this.#out = opts.stream ?? process.stderr;
    this.#tty = opts.tty ?? !!this.#out.isTTY;
    this.#plainEveryMs = (opts.plainEverySeconds ?? 5) * 1000;
    this.#columns = opts.columns ?? terminalColumns(this.#out);
  }

  placementStart(label: string, totalMs: number): void {
    this.#label = label;
    this.#totalMs = totalMs;
    this.#t = 0;
    this.#callsFrom = null;
    this.#mem = this.#limit = this.#ok = this.#rejected = this.#failed = this.#restarts = this.#ooms = 0;
    this.#lastPlain = 0;
    this.#line(`${label}: starting`);
    if (this.#tty && !this.#timer) {
      this.#timer = setInterval(() => this.#render(), 250);
      this.#timer.unref();
    }
  }

  onSample(line: SampleLine): void {
    if (line.t > this.#t) this.#t = line.t;
    if (line.kind === 'memory') {
      this.#mem = line.usageBytes;
      this.#limit = line.limitBytes;
    } else if (line.kind === 'load') {
      this.#callsFrom ??= line.t;
      this.#ok = line.ok;
      this.#rejected = line.rateLimited;
      this.#failed = line.error + line.deadlineExceeded;
    } else if (line.kind === 'event') {
      if (line.type === 'agent-restart') this.#restarts++;
      if (line.type === 'oom-kill') {
        this.#ooms++;
        this.#line(`${this.#label}: OOM kill at ${(line.t / 1000).toFixed(1)}s (${line.detail ?? ''})`);
      }
    }
    if (!this.#tty && line.t >= 0 && line.t - this.#lastPlain >= this.#plainEveryMs) {
      this.#lastPlain = line.t;
      this.#out.write(`${this.#status()}\n`);
    }
  }

  #status(): string {
    let phase: string;
    if (this.#t < 0) phase = `warm-up ${(-this.#t / 1000).toFixed(0)}s`;
    else if (this.#callsFrom === null) phase = `starting pods ${(this.#t / 1000).toFixed(0)}s`;
    else phase = `${Math.max(0, (this.#t - this.#callsFrom) / 1000).toFixed(0)}/${(this.#totalMs / 1000).toFixed(0)}s`;
    const pct = this.#limit ? ` (${((this.#mem / this.#limit) * 100).toFixed(0)}%)` : '';
    const full = `${this.#label} ${phase} | agent ${formatMiB(this.#mem)}${this.#limit ? ` / ${formatMiB(this.#limit, 0)}` : ''}${pct} | ok ${this.#ok}/s rejected ${this.#rejected}/s failed ${this.#failed}/s | OOM ${this.#ooms} restarts ${this.#restarts}`;
    if (full.length <= this.#columns - 1) return full;
    // Narrow terminals: the same figures in short, cut at the edge as a last resort.
    const mem = `${(this.#mem / 2 ** 20).toFixed(1)}${this.#limit ? `/${(this.#limit / 2 ** 20).toFixed(0)}` : ''} MiB`;
    const short = `${this.#label} ${phase} | ${mem} | ok ${this.#ok} rej ${this.#rejected} fail ${this.#failed}/s | OOM ${this.#ooms}`;
    return short.length <= this.#columns - 1 ? short : `${short.slice(0, this.#columns - 2)}…`;
  }

  #render(): void {
    if (this.#label) this.#out.write(`\r\x1b[K${this.#status()}`);
  }

  #line(text: string): void {
    const lines = `${wrapText(text, this.#columns, '', '  ').join('\n')}\n`;
    this.#out.write(this.#tty ? `\r\x1b[K${lines}` : lines);
  }

  placementEnd(summary: string): void {
    this.#line(`${this.#label}: ${summary}`);
    this.#label = '';
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#tty) this.#out.write('\r\x1b[K');
  }
}
