// The spire-server's registration entries kept in step with the sandbox, as a controller would:
// an entry per pod as it starts, deleted when it ends, in batches.
import type { SandboxPod } from '../../sandbox/index.js';
import type { SpireServer } from '../../spire/index.js';
import type { TargetContext } from '../target.js';

// Pods starting together are registered in one `entry create` batch.
const REGISTER_DELAY_MS = 200;

/**
 * Keeps the server's entries in step with the sandbox, as a controller would: an entry per pod as
 * it starts, deleted when it ends; changes close together go in one batch, one batch at a time.
 */
export class PodRegistrar {
  readonly #added: SandboxPod[] = [];
  readonly #ended: string[] = [];
  #timer: NodeJS.Timeout | null = null;
  #chain: Promise<void> = Promise.resolve();
  registered = 0;
  constructor(
    private readonly server: SpireServer,
    private readonly event: TargetContext['event'],
  ) {}

  add = (pod: SandboxPod): void => {
    this.#added.push(pod);
    this.#schedule();
  };

  end = (pod: SandboxPod): void => {
    this.#ended.push(pod.uid);
    this.#schedule();
  };

  #schedule(): void {
    this.#timer ??= setTimeout(() => void this.flush(), REGISTER_DELAY_MS);
  }

  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const added = this.#added.splice(0);
    const ended = this.#ended.splice(0);
    if (added.length === 0 && ended.length === 0) return this.#chain;
    this.#chain = this.#chain.then(async () => {
      try {
        if (added.length > 0) {
          const n = await this.server.registerPods(added.map((p) => ({ uid: p.uid, name: p.name, namespace: p.namespace })));
          this.registered += n;
          this.event('note', `spire: ${n} pod entries created (${this.server.registeredPods} live)`);
        }
        if (ended.length > 0) {
          const n = await this.server.unregisterPods(ended);
          this.event('note', `spire: ${n} entries of ended pods deleted (${this.server.registeredPods} live)`);
        }
      } catch (err) {
        this.event('note', `spire: updating entries (${added.length} new pods, ${ended.length} ended) failed: ${(err as Error).message}`);
      }
    });
    return this.#chain;
  }

  close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#added.length = 0;
    this.#ended.length = 0;
    return this.#chain;
  }
}
