// A runtime in front of runc that drops the capabilities this host cannot grant. `--privileged`
// asks for every capability; where the bounding set lacks one (CAP_SYS_RESOURCE on this kind of VM)
// runc fails with "unable to apply caps: operation not permitted". kind's nodes are privileged
// containers and run privileged pods (kube-proxy), so Docker and the nodes' containerd both use it.
// Where every capability exists it passes everything through unchanged.

/** Capability names in bit order (linux/capability.h), as OCI specs spell them. */
export const CAPABILITIES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'LEASE',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'SETFCAP',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'SYSLOG',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
  'AUDIT_READ',
  'PERFMON',
  'BPF',
  'CHECKPOINT_RESTORE',
] as const;

/** The capabilities a CapBnd mask (hex, from /proc/self/status) holds, as CAP_* names. */
export function capsInMask(hex: string): string[] {
  if (!/^[0-9a-fA-F]{1,16}$/.test(hex)) throw new Error(`CapBnd must be a hex mask, got "${hex}"`);
  const mask = BigInt(`0x${hex}`);
  return CAPABILITIES.filter((_, bit) => (mask >> BigInt(bit)) & 1n).map((c) => `CAP_${c}`);
}

/**
 * The wrapper: a POSIX shell script that, for `create`/`run` (the bundle's config.json) and `exec`
 * (the --process file), removes every capability outside the caller's bounding set, then execs runc.
 * Needs jq; `runc` is the real runtime's path.
 */
export function runcCapsScript(runc: string): string {
  const names = CAPABILITIES.map((c) => `CAP_${c}`).join(' ');
  return `#!/bin/sh
# runc without the capabilities outside this host's bounding set (written by attestorm; see
# src/kind/runc-caps.ts). Everything else passes through to ${runc} unchanged.
set -eu
bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)
allowed='['
bit=0
for cap in ${names}; do
  if [ $(( (0x$bnd >> bit) & 1 )) -eq 1 ]; then allowed="$allowed\\"$cap\\","; fi
  bit=$((bit + 1))
done
allowed="\${allowed%,}]"
filter() {
  # $1: a JSON file; $2: the jq path of its capabilities object.
  tmp="$1.attestorm-caps"
  jq --argjson ok "$allowed" "if $2 then $2 |= with_entries(.value |= map(select(. as \\$c | \\$ok | index([\\$c])))) else . end" "$1" > "$tmp"
  mv "$tmp" "$1"
}
cmd='' bundle='.' process=''
prev=''
for a in "$@"; do
  case "$prev" in
    --bundle|-b) bundle="$a" ;;
    --process|-p) process="$a" ;;
  esac
  case "$a" in
    --bundle=*) bundle="\${a#--bundle=}" ;;
    --process=*) process="\${a#--process=}" ;;
    create|run|exec) [ -z "$cmd" ] && cmd="$a" ;;
  esac
  prev="$a"
done
case "$cmd" in
  create|run) [ -f "$bundle/config.json" ] && filter "$bundle/config.json" '.process.capabilities' ;;
  exec) [ -n "$process" ] && [ -f "$process" ] && filter "$process" '.capabilities' ;;
esac
exec ${runc} "$@"
`;
}
