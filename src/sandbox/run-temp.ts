// The run's temp folder: the owner file, the kubelet token and CA, and copies of files that pods of
// another uid cannot reach where they are; every file the sandbox put there is removed with it.
import { chmodSync, constants, copyFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { runTempDir } from './run-id.js';
import { createRunFolder } from './runtime-dir.js';
import { unreachableFor, type OsIds } from './uid-reach.js';

export class RunTempFolder {
  readonly dir: string;
  readonly #files: string[] = [];
  /** Copies of files for pods of another uid (share), by original path. */
  readonly #shared = new Map<string, string>();

  /** dir: the run's folder in the runtime base (runTempDir), or elsewhere in a test. */
  constructor(runId: string, dir = runTempDir(runId)) {
    this.dir = dir;
  }

  /**
   * Makes the folder, new (never an existing one, nor through a symlink) in the checked runtime
   * base: 0700, or 0711 when pods of another uid (open) load their bundles from here by name.
   */
  create(open = false): void {
    createRunFolder(this.dir, open);
  }

  /** A file made elsewhere in the folder, to be removed with it. */
  track(file: string): void {
    this.#files.push(file);
  }

  write(name: string, content: string): string {
    const file = join(this.dir, name);
    // World-readable: an agent under test may run as another user and must read the token and CA
    // (the folder is traverse-only for others). 'wx': never through something already there.
    writeFileSync(file, content, { mode: 0o644, flag: 'wx' });
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
      copyFileSync(file, copy, constants.COPYFILE_EXCL);
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
