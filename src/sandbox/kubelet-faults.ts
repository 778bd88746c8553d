// The kubelet emulator's run-time faults (chaos): extra latency, an error rate, down (connections
// refused) and stall (requests read and never answered), each switched on and off on its own.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** What a fault has switched on; each field is off when null/false. */
export interface KubeletFaultState {
  /** Added to the configured latency. */
  extraLatencyMs: number;
  /** Replaces the configured failure rate (HTTP 500) while set. */
  errorRate: number | null;
  /** Not listening: connections are refused. */
  down: boolean;
  /** Requests are read and never answered. */
  stalled: boolean;
}

/** Run-time fault switches (chaos): each can be set and cleared on its own; clearFaults() ends them all. */
export interface KubeletFaultControls {
  setExtraLatency(ms: number): void;
  setErrorRate(rate: number | null): void;
  /** Stops listening (new connections refused) and drops open connections; resolves once closed. */
  goDown(): Promise<void>;
  /** Listens again on the same address and port. */
  comeUp(): Promise<void>;
  /** On: every request is held unanswered. Off: held requests' connections are destroyed. */
  setStall(on: boolean): void;
  faultState(): KubeletFaultState;
  /** Ends every fault: latency and rate as configured, listening, stalled connections destroyed. */
  clearFaults(): Promise<void>;
}

/** The fault switches over a listening server, and what its close() needs of them. */
export function kubeletFaults(k: {
  server: Server;
  host: string;
  port: number;
  /** Read by the request handler on every request. */
  fault: KubeletFaultState;
  stalledSockets: Set<Socket>;
  /** True once the emulator's close() has begun: down/up changes then do nothing. */
  closing: () => boolean;
}): { faults: KubeletFaultControls; destroyStalled(): void; settled(): Promise<void> } {
  const { server, host, port, fault, stalledSockets } = k;
  const destroyStalled = () => {
    for (const sock of stalledSockets) sock.destroy();
    stalledSockets.clear();
  };
  // down/up share one promise chain so a quick down-up-down never interleaves listen and close.
  let listenerChange: Promise<void> = Promise.resolve();
  const changeListener = (down: boolean) =>
    // A failed change (the port taken meanwhile) must not poison the changes after it, nor close().
    (listenerChange = listenerChange
      .catch(() => {})
      .then(async () => {
        if (k.closing() || fault.down === down) return;
        fault.down = down;
        if (down) {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          });
        } else {
          await new Promise<void>((resolve, reject) => {
            const onError = (err: Error) => {
              fault.down = true;
              reject(new Error(`kubelet emulator cannot listen again on ${host}:${port}: ${err.message}`, { cause: err }));
            };
            server.once('error', onError);
            server.listen(port, host, () => {
              server.off('error', onError);
              resolve();
            });
          });
        }
      }));
  const faults: KubeletFaultControls = {
    setExtraLatency(ms) {
      if (!(ms >= 0)) throw new RangeError(`kubelet extra latency must be >= 0 ms, got ${ms}`);
      fault.extraLatencyMs = ms;
    },
    setErrorRate(rate) {
      if (rate !== null && !(rate >= 0 && rate <= 1)) throw new RangeError(`kubelet error rate must be within 0..1, got ${rate}`);
      fault.errorRate = rate;
    },
    goDown: () => changeListener(true),
    comeUp: () => changeListener(false),
    setStall(on) {
      fault.stalled = on;
      if (!on) destroyStalled();
    },
    faultState: () => ({ ...fault }),
    async clearFaults() {
      fault.extraLatencyMs = 0;
      fault.errorRate = null;
      faults.setStall(false);
      await changeListener(false);
    },
  };
  // The last down/up change, settled either way (close() waits for it before closing the server).
  return { faults, destroyStalled, settled: () => listenerChange.catch(() => {}) };
}
