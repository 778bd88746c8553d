// What a worker's loop needs from a client transport: one call at a time, reported through one
// callback. Types only, so a worker bundle pulls in just the transport it runs.
import type { ConnectionMode, LoadMethod } from './messages.js';

/** code, details, and the raw response (unary OK only). */
export type CallDone = (code: number, details: string, response: Buffer | null) => void;

export interface Transport {
  /** Connections opened so far (per-call: one per call). */
  readonly channelsOpened: number;
  /** Starts one call; returns the method actually called (ValidateJWTSVID may need a token first). */
  call(method: LoadMethod, done: CallDone): LoadMethod;
  /** Ends the connection held, at once. */
  close(): void;
}

export type TransportFactory = (socket: string, mode: ConnectionMode, deadlineMs: number, audience: string, needToken: boolean) => Transport;
