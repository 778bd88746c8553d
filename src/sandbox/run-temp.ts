// The run's temp folder: the owner file, the kubelet token and CA, and copies of files that pods of
// another uid cannot reach where they are; every file the sandbox put there is removed with it.
import { chmodSync, copyFileSync, mkdirSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { runTempDir } from './run-id.js';
import { unreachableFor, type OsIds } from './uid-reach.js';

export class RunTempFolder {
  readonly dir: string;
  readonly #files: string[] = [];
  /** Copies of files for pods of another uid (share), by original path. */
  readonly #shared = new Map<string, string>();

  constructor(runId: string) {
    this.dir = runTempDir(runId);
  }

  /** Makes the folder, open to pods of another uid whatever the umask. */
  create(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    // Whatever the umask: pods of another uid load their bundles from here (shareWithPods). The
    // shared temp root too, where this user made it (a umask of 077 would close it).
    chmodSync(this.dir, 0o755);
    if (statSync(dirname(this.dir)).uid === process.getuid?.()) chmodSync(dirname(this.dir), 0o755);
  }

  /** A file made elsewhere in the folder, to be removed with it. */
  track(file: string): void {
    this.#files.push(file);
  }

  write(name: string, content: string): string {
    const file = join(this.dir, name);
    // World-readable: an agent under test may run as another user and must read the token and CA.
    writeFileSync(file, content, { mode: 0o644 });
    this.#files.push(file);
    return file;
  }

  /**
   * A path to file that processes as ids can read: the file itself, or, when ids (some pods' uid;
   * null when all run as this process's) cannot reach it (a checkout below a 0700 folder), a copy here.
   */
  share(file: string, ids: OsIds | null): string {
    if (!ids || unreachableFor(file, ids) === null) return file;
    let copy = this.#shared.get(file);
    if (!copy) {
      copy = join(this.dir, basename(file));
      copyFileSync(file, copy);
      chmodSync(copy, 0o644);
      this.#files.push(copy);
      this.#shared.set(file, copy);
    }
    return copy;
  }

  /** Removes the files put here, then the folder unless something else of the run is still in it. */
  remove(): void {
    for (const f of this.#files) rmSync(f, { force: true });
    try {
      rmdirSync(this.dir);
    } catch {
      // Not empty (someone else's part of the run) or already gone.
    }
  }
}
