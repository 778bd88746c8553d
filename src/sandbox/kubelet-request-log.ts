// Each GET /pods as the kubelet emulator served it — when it arrived, when its answer started and
// ended being written, its status, size, queue wait and connection — handed to whoever listens
// once the request is over, so the fetch schedule an agent keeps can be read beside its memory.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One /pods request, times in wall-clock milliseconds (fractional: performance.timeOrigin + performance.now()). */
export interface KubeletRequestRecord {
  arrivedAt: number;
  /** When the answer's head was written; null: never answered (stalled, or its client left first). */
  answerStartedAt: number | null;
  /** When the last byte was handed to the kernel (the response's finish); null: never finished. */
  answerEndedAt: number | null;
  /** HTTP status answered; null: none. */
  status: number | null;
  /** Body bytes written. */
  bytes: number;
  /** Time spent waiting for its turn in the service-time queue (0 without one). */
  queueWaitMs: number;
  /** The connection it came on: 1 for the emulator's first connection, counting up. */
  conn: number;
  /** /pods requests in flight at the emulator when this one arrived, itself included. */
  inFlight: number;
  /** The client closed the connection before the answer was written whole. */
  abandoned: boolean;
}

export type KubeletRequestListener = (record: KubeletRequestRecord) => void;

/** The open record of a request the emulator is answering. */
export interface PendingRequest {
  /** The answer's head is about to be written. */
  answering(status: number, bytes: number): void;
  queueWait(ms: number): void;
}

export const wallClockMs = (): number => performance.timeOrigin + performance.now();

/** Counts connections and requests in flight, and tells listeners of every ended /pods request. */
export class KubeletRequestLog {
  readonly #listeners = new Set<KubeletRequestListener>();
  readonly #connIds = new WeakMap<Socket, number>();
  #nextConn = 1;
  #inFlight = 0;

  /** /pods requests being answered now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  listen(listener: KubeletRequestListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A /pods request has arrived: its record ends when the response finishes or its connection closes. */
  begin(req: IncomingMessage, res: ServerResponse): PendingRequest {
    let conn = this.#connIds.get(req.socket);
    if (conn === undefined) this.#connIds.set(req.socket, (conn = this.#nextConn++));
    const record: KubeletRequestRecord = {
      arrivedAt: wallClockMs(),
      answerStartedAt: null,
      answerEndedAt: null,
      status: null,
      bytes: 0,
      queueWaitMs: 0,
      conn,
      inFlight: ++this.#inFlight,
      abandoned: false,
    };
    let ended = false;
    const end = (finished: boolean) => {
      if (ended) return;
      ended = true;
      this.#inFlight--;
      if (finished) record.answerEndedAt = wallClockMs();
      else record.abandoned = true;
      for (const l of this.#listeners) l(record);
    };
    res.once('finish', () => end(true));
    res.once('close', () => end(false));
    return {
      answering(status, bytes) {
        record.answerStartedAt = wallClockMs();
        record.status = status;
        record.bytes = bytes;
      },
      queueWait(ms) {
        record.queueWaitMs = ms;
      },
    };
  }
}
