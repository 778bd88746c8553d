// Boots one of the project's cgroup-v2 QEMU guests (test/vm/README.md) for one job and returns what
// the job left in its folder. Exactly one guest at a time, and QEMU always reaped: SIGTERM, then
// SIGKILL after a grace period, also when the test that started it fails or the process exits.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { loadBundles } from '../../src/load/bundle.js';
import { bundleReferenceAgent } from '../../src/targets/reference/local.js';
import { PROJECT_ROOT } from '../../src/util/index.js';

export type Flavour = 'minimal' | 'systemd';
/**
 * Where the job's shell sits. minimal: the root cgroup, or system.slice/runner.service as a runner's
 * step is placed. systemd: a login session through sudo, the same session's user without sudo, or
 * the system service attestorm-job.service.
 */
export type Placement = 'root' | 'runner-service' | 'session' | 'user' | 'service';

export const PLACEMENTS: Record<Flavour, readonly Placement[]> = {
  minimal: ['root', 'runner-service'],
  systemd: ['session', 'user', 'service'],
};

export interface GuestJob {
  flavour: Flavour;
  placement: Placement;
  /** A bash script, run in the checkout (same absolute path as on the host); it may write result files to $ATTESTORM_JOB_FILES. */
  job: string;
  /** From QEMU's start to its end; QEMU is killed when it passes. */
  timeoutMs: number;
}

export interface GuestResult {
  /** The job script's exit code; null when it did not finish (timeout, guest crash). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The files the job wrote to $ATTESTORM_JOB_FILES, by name. */
  files: Record<string, string>;
  /** Seconds from QEMU's start to the job's start; null when the job never started. */
  bootSeconds: number | null;
  timedOut: boolean;
  /** The job finished but the guest did not power off by itself, so the host stopped it. */
  stoppedByHost: boolean;
  /** The guest's serial console (kernel, systemd, getty), for diagnosing a guest that went wrong. */
  console: string;
}

const CACHE = process.env.ATTESTORM_VM_CACHE || '/var/cache/attestorm/vm';
const BUILDER = join(PROJECT_ROOT, 'test', 'vm', 'build-image.sh');
const GRACE_MS = 5_000;
/** How long a guest may take to power off after its job ended. */
const POWEROFF_MS = 30_000;

function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((d) => {
    try {
      accessSync(join(d, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The guest kernel: the newest in /boot whose modules include 9p (Debian's linux-image-amd64). */
export function guestKernel(): string | null {
  if (process.env.ATTESTORM_VM_KERNEL) return process.env.ATTESTORM_VM_KERNEL;
  let names: string[];
  try {
    names = readdirSync('/boot');
  } catch {
    return null;
  }
  const versions = names
    .filter((n) => n.startsWith('vmlinuz-'))
    .map((n) => n.slice('vmlinuz-'.length))
    .filter((v) => existsSync(`/boot/initrd.img-${v}`) && existsSync(`/lib/modules/${v}/kernel/fs/9p`))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return versions.at(-1) ?? null;
}

/** Why the test bed cannot run on this host (for that flavour), or null when it can. */
export function vmUnavailableReason(flavour: Flavour = 'systemd'): string | null {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `the VM test bed needs an x86-64 Linux host, this is ${process.platform}/${process.arch}`;
  if (process.getuid?.() !== 0) return 'the VM test bed needs root (it builds root filesystems and device nodes)';
  if (!onPath('qemu-system-x86_64')) return 'no qemu-system-x86_64 in PATH (apt-get install qemu-system-x86)';
  if (!guestKernel()) return 'no guest kernel: no /boot/vmlinuz-* with its initrd and 9p modules (apt-get install linux-image-amd64)';
  if (flavour === 'minimal' && !existsSync('/bin/busybox')) return 'no /bin/busybox (apt-get install busybox-static)';
  if (flavour === 'minimal' && !onPath('cpio')) return 'no cpio (apt-get install cpio)';
  if (flavour === 'systemd' && !onPath('debootstrap')) return 'no debootstrap (apt-get install debootstrap)';
  return null;
}

/** Builds the flavour's guest unless the cache has it (keyed by the recipe); returns its cache folder. */
export function buildImage(flavour: Flavour): string {
  const out = execFileSync('nice', ['-n', '5', BUILDER, flavour], {
    encoding: 'utf8',
    env: { ...process.env, ATTESTORM_VM_CACHE: CACHE, ATTESTORM_VM_KERNEL: guestKernel() ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out.trim().split('\n').at(-1)!;
}

/**
 * Bundles the CLI, the reference agent, the pod and worker entries and builds the native worker on
 * the host, into the checkout's cache the guest shares: esbuild and gcc under emulation cost minutes
 * a guest.
 */
export async function warmBundles(): Promise<void> {
  execFileSync(process.execPath, [join(PROJECT_ROOT, 'bin', 'attestorm.js'), '--version'], { stdio: 'ignore' });
  await Promise.all([bundleReferenceAgent(), loadBundles('native')]);
}

function accel(): string[] {
  // This project's machines are nested guests whose /dev/kvm cannot run a stock kernel (it hangs
  // after "Probing EDD"), so emulation is the default and KVM is asked for.
  return process.env.ATTESTORM_VM_ACCEL === 'kvm' ? ['-accel', 'kvm', '-cpu', 'host'] : ['-accel', 'tcg,thread=multi', '-cpu', 'max'];
}

function share(path: string, tag: string, readonly = false): string[] {
  return ['-virtfs', `local,path=${path},mount_tag=${tag},security_model=passthrough,multidevs=remap${readonly ? ',readonly=on' : ''}`];
}

/** The QEMU command line for a job folder (also what README.md's by-hand run prints). */
export function qemuArgs(flavour: Flavour, placement: Placement, image: string, jobShare: string): string[] {
  const kver = guestKernel()!;
  const common = [...accel(), '-m', '3G', '-smp', '2', '-display', 'none', '-monitor', 'none', '-no-reboot', '-nic', 'none'];
  const params = `attestorm.checkout=${PROJECT_ROOT} attestorm.placement=${placement}`;
  if (flavour === 'minimal') {
    return [
      ...common,
      ...['-kernel', `/boot/vmlinuz-${kver}`, '-initrd', join(image, 'initramfs.gz')],
      ...['-append', `console=ttyS0 quiet panic=-1 ${params}`],
      ...share('/', 'hostroot', true),
      ...share(PROJECT_ROOT, 'checkout'),
      ...share(jobShare, 'job'),
    ];
  }
  return [
    ...common,
    ...['-kernel', `/boot/vmlinuz-${kver}`, '-initrd', `/boot/initrd.img-${kver}`],
    // -snapshot: the guest's writes go to a temporary overlay, the cached image stays pristine.
    ...['-snapshot', '-drive', `file=${join(image, 'root.ext4')},format=raw,if=virtio`],
    // cgroup v2 only: systemd mounts the unified hierarchy and the kernel offers no v1 controller.
    ...['-append', `console=ttyS0 root=/dev/vda rw quiet panic=-1 systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all ${params}`],
    ...share(PROJECT_ROOT, 'checkout'),
    ...share(jobShare, 'job'),
  ];
}

const live = new Set<ChildProcess>();
// A test runner that exits while a guest runs must not leave QEMU behind.
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});
let busy: Promise<unknown> = Promise.resolve();

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Boots a guest, runs the job in the placement asked for, and returns its outcome. One guest at a time. */
export function bootGuest(job: GuestJob): Promise<GuestResult> {
  if (!PLACEMENTS[job.flavour].includes(job.placement))
    throw new Error(`placement ${job.placement} does not exist in the ${job.flavour} guest (${PLACEMENTS[job.flavour].join(', ')})`);
  const run = busy.then(() => boot(job));
  busy = run.catch(() => undefined);
  return run;
}

async function boot(job: GuestJob): Promise<GuestResult> {
  const reason = vmUnavailableReason(job.flavour);
  if (reason) throw new Error(reason);
  const image = buildImage(job.flavour);
  const dir = mkdtempSync(join(tmpdir(), 'attestorm-vm-'));
  const jobShare = join(dir, 'share');
  const files = join(jobShare, 'files');
  mkdirSync(files, { recursive: true });
  // World-writable: in the "user" placement the job runs as tester (uid 1000).
  chmodSync(jobShare, 0o777);
  chmodSync(files, 0o777);
  writeFileSync(join(jobShare, 'job.sh'), job.job, { mode: 0o644 });
  const consoleLog = join(dir, 'console.log');
  const started = Date.now();
  const qemu = spawn('nice', ['-n', '5', 'qemu-system-x86_64', ...qemuArgs(job.flavour, job.placement, image, jobShare), '-serial', `file:${consoleLog}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  live.add(qemu);
  let qemuStderr = '';
  qemu.stderr.setEncoding('utf8').on('data', (d: string) => (qemuStderr += d));
  let bootSeconds: number | null = null;
  // The job's outcome is on the host once exit-code exists; a guest that does not power off soon
  // after (a unit stuck in shutdown) is stopped from here, so that it cannot hold the test's time.
  let finishedAt: number | null = null;
  let stoppedByHost = false;
  const poll = setInterval(() => {
    if (bootSeconds === null && existsSync(join(jobShare, 'started'))) bootSeconds = (Date.now() - started) / 1000;
    if (finishedAt === null && existsSync(join(jobShare, 'exit-code'))) finishedAt = Date.now();
    if (finishedAt !== null && Date.now() - finishedAt > POWEROFF_MS && qemu.exitCode === null && qemu.signalCode === null) {
      stoppedByHost = true;
      qemu.kill('SIGKILL');
    }
  }, 250);
  let timedOut = false;
  let killTimer: NodeJS.Timeout | undefined;
  const deadline = setTimeout(() => {
    timedOut = true;
    qemu.kill('SIGTERM');
    killTimer = setTimeout(() => qemu.kill('SIGKILL'), GRACE_MS);
  }, job.timeoutMs);
  try {
    await new Promise<void>((resolve, reject) => {
      qemu.once('error', reject);
      qemu.once('exit', () => resolve());
    });
  } finally {
    clearTimeout(deadline);
    clearTimeout(killTimer);
    clearInterval(poll);
    if (qemu.exitCode === null && qemu.signalCode === null) qemu.kill('SIGKILL');
    live.delete(qemu);
  }
  if (bootSeconds === null && existsSync(join(jobShare, 'started'))) bootSeconds = (Date.now() - started) / 1000;
  const code = readText(join(jobShare, 'exit-code')).trim();
  const result: GuestResult = {
    exitCode: code === '' ? null : Number(code),
    stdout: readText(join(jobShare, 'stdout')),
    stderr: readText(join(jobShare, 'stderr')) + (qemuStderr ? `\n[qemu] ${qemuStderr}` : ''),
    files: Object.fromEntries(readdirSync(files).map((f) => [f, readText(join(files, f))])),
    bootSeconds,
    timedOut,
    stoppedByHost,
    console: readText(consoleLog),
  };
  if (!process.env.ATTESTORM_VM_KEEP) rmSync(dir, { recursive: true, force: true });
  return result;
}
