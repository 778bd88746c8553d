// The jobs the VM tests run in a guest, as bash: each records what the test asserts on into
// $ATTESTORM_JOB_FILES (who ran it and in which cgroup, the delegation decision, the run's exit code,
// console and results.json, and every cgroup named after attestorm that is left when it ends).
import type { RunResults } from '../../src/contract/index.js';
import type { GuestResult } from './guest.js';

/** The small storm every placement runs (fixtures/v2-small.yaml), by its path in the checkout. */
export const SMALL = 'test/vm/fixtures/v2-small.yaml';

const HEADER = String.raw`set -u
F=$ATTESTORM_JOB_FILES
# Cgroups named after attestorm, but for the test bed's own unit that runs the job.
leftovers() { find /sys/fs/cgroup -name '*attestorm*' 2>/dev/null | grep -v '/attestorm-job\.service$' || true; }
`;

// Every agent cgroup's memory.max and memory.swap.max, and every pod cgroup, once a second while the
// job runs.
const WATCH = String.raw`(
  while :; do
    find /sys/fs/cgroup -path '*attestorm/*' -type d -name 'agent-*' 2>/dev/null | while read -r d; do
      # Only whole lines: a cgroup removed between find and cat is skipped.
      m=$(cat "$d/memory.max" 2>/dev/null) && s=$(cat "$d/memory.swap.max" 2>/dev/null) && echo "$d $m $s"
    done
    find /sys/fs/cgroup -path '*attestorm/*/kubepods*' -type d -name '*pod*' 2>/dev/null >>"$F/pods"
    sleep 1
  done
) >"$F/limits" &
watcher=$!
`;

const PRELUDE = String.raw`${HEADER}# The minimal guest has no network manager: the kubelet emulator and agents listen on loopback.
ip link set lo up 2>/dev/null || true
{ id; cat /proc/self/cgroup; } >"$F/who"
node bin/attestorm.js debug cgroup --host >"$F/debug-cgroup" 2>&1 || true
out=$(mktemp -d)/run
${WATCH}`;

const EPILOGUE = String.raw`
kill $watcher 2>/dev/null
[ -f "$out/results.json" ] && cp "$out/results.json" "$F/results.json"
# systemd removes an emptied transient scope (attestorm-<pid>.scope) a moment after its last process.
for _ in $(seq 20); do leftovers | grep -q . || break; sleep 0.5; done
leftovers >"$F/left"
`;

/** Runs one command that writes its run folder to $out; `$out` is expanded by the guest's shell. */
export function runJob(command: string): string {
  return `${PRELUDE}${command} >"$F/run.out" 2>"$F/run.err"\necho $? >"$F/run-exit"\n${EPILOGUE}`;
}

/**
 * Starts a run, SIGKILLs the runner once the first variant's pods have cgroups, then runs
 * `attestorm cleanup`: records what was left before and after.
 */
export function killedRunJob(command: string): string {
  return String.raw`${PRELUDE}${command} >"$F/run.out" 2>"$F/run.err" &
pid=$!
i=0
while [ $i -lt 300 ] && ! find /sys/fs/cgroup -path '*attestorm*' -name '*pod*' 2>/dev/null | grep -q .; do sleep 1; i=$((i+1)); done
echo "$i" >"$F/pods-after-seconds"
sleep 3
leftovers >"$F/before-cleanup"
# The runner and everything it started in the same process group: what a kill -9 of a CI step does.
kill -9 -- -$pid 2>/dev/null || kill -9 $pid
wait $pid 2>/dev/null
sleep 2
kill $watcher 2>/dev/null
node bin/attestorm.js cleanup >"$F/cleanup.out" 2>&1
echo $? >"$F/cleanup-exit"
leftovers >"$F/left"
# The harness's processes: the CLI, and the agent, pods and workers it runs from its bundle cache.
ps -eo pid,args | grep -E 'bin/attestorm\.js|\.cache/attestorm/' | grep -v grep >"$F/left-processes" || true
[ -f "$out/results.json" ] && cp "$out/results.json" "$F/results.json"
`;
}

export function results(r: GuestResult): RunResults {
  const text = r.files['results.json'];
  if (!text) throw new Error(`the job left no results.json (exit ${r.exitCode}); run.err:\n${r.files['run.err'] ?? ''}\nstderr:\n${r.stderr}`);
  return JSON.parse(text) as RunResults;
}

/** What a failed assertion should show: the run's console and the guest's. */
export function explain(r: GuestResult): string {
  const tail = (s: string | undefined, n: number) => (s ?? '').split('\n').slice(-n).join('\n');
  return [
    `job exit ${r.exitCode}, booted in ${r.bootSeconds ?? '-'} s${r.timedOut ? ', timed out' : ''}`,
    `who: ${r.files.who ?? ''}`,
    `debug cgroup --host: ${r.files['debug-cgroup'] ?? ''}`,
    `run exit ${r.files['run-exit'] ?? '-'}; run.err (tail):\n${tail(r.files['run.err'], 30)}`,
    `run.out (tail):\n${tail(r.files['run.out'], 30)}`,
    `job stderr (tail):\n${tail(r.stderr, 20)}`,
    `guest console (tail):\n${tail(r.console, 30)}`,
  ].join('\n');
}

/** Lines of a recorded file, blank and repeated ones dropped. */
export function lines(r: GuestResult, name: string): string[] {
  return [...new Set((r.files[name] ?? '').split('\n').filter((l) => l.trim() !== ''))];
}

/**
 * attestorm inside a Docker container with a cgroup namespace of its own, as a GitHub job container
 * or a `docker run --privileged` user runs it: Debian's dockerd in the guest, an image imported from
 * the guest's own root filesystem (no registry), the checkout bind-mounted at its path. Once
 * privileged (a writable cgroup mount), once not (the run must refuse before anything starts).
 */
export function containerJob(): string {
  return String.raw`${HEADER}checkout=$(pwd)
# No network in the guest: no bridge, no iptables; the containers run with loopback only.
mkdir -p /etc/docker
echo '{"bridge": "none", "iptables": false, "ip6tables": false}' >/etc/docker/daemon.json
systemctl start docker >"$F/docker-start" 2>&1 || { journalctl -u docker --no-pager | tail -n 30 >>"$F/docker-start"; exit 1; }
tar -C / --one-file-system --exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' --exclude='./run/*' --exclude='./tmp/*' \
  --exclude=./var/lib/docker --exclude=./var/lib/containerd --exclude=./lib/modules --exclude=./usr/lib/modules \
  --exclude=./usr/share/doc --exclude=./usr/share/locale --exclude=./usr/share/man --exclude=./home \
  --exclude=./usr/sbin/dockerd --exclude=./usr/bin/docker --exclude='./usr/bin/containerd*' --exclude=./usr/bin/ctr -c . |
  docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' - attestorm-vm:local >"$F/import" 2>&1 || exit 1
out=$(mktemp -d)
chmod 755 "$out"
in_container() {
  docker run --rm --network none --cgroupns=private -v "$checkout:$checkout" -v "$out:/out" -w "$checkout" "$@"
}
in_container --privileged attestorm-vm:local sh -c 'cat /proc/self/cgroup; node bin/attestorm.js debug cgroup --host' >"$F/debug-cgroup" 2>&1
${WATCH}in_container --privileged attestorm-vm:local node bin/attestorm.js run ${SMALL} --out /out/run --no-report >"$F/run.out" 2>"$F/run.err"
echo $? >"$F/run-exit"
kill $watcher 2>/dev/null
[ -f "$out/run/results.json" ] && cp "$out/run/results.json" "$F/results.json"
# Unconfined by AppArmor: the guest's kernel has it and Docker would want its profile loaded first.
in_container --security-opt apparmor=unconfined attestorm-vm:local node bin/attestorm.js run ${SMALL} --out /out/refused --no-report >"$F/refused.out" 2>"$F/refused.err"
echo $? >"$F/refused-exit"
[ -e "$out/refused" ] && echo yes >"$F/refused-wrote" || true
leftovers >"$F/left"
docker ps -aq >"$F/containers-left"
`;
}
