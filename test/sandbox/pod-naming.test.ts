// Cgroup paths as the kubelet names them for every driver and QoS class, checked against the agent's
// own parser, and the other names a pod gets (image IDs, pod IPs).
import { describe, expect, it } from 'vitest';
import { parseCgroup } from '../../src/agent/index.js';
import { containerCgroupRel, podCgroupRel } from '../../src/sandbox/index.js';

const UID = '3f2a8c1e-5b7d-4e9a-8c6f-1d2e3f4a5b6c';
const CID = 'a'.repeat(16) + '0123456789abcdef'.repeat(3);

describe('pod cgroup paths', () => {
  it.each([
    ['cgroupfs', 'besteffort', `kubepods/besteffort/pod${UID}/${CID}`],
    ['cgroupfs', 'burstable', `kubepods/burstable/pod${UID}/${CID}`],
    ['cgroupfs', 'guaranteed', `kubepods/pod${UID}/${CID}`],
    ['systemd', 'besteffort', `kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID.replaceAll('-', '_')}.slice/cri-containerd-${CID}.scope`],
    ['systemd', 'burstable', `kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID.replaceAll('-', '_')}.slice/cri-containerd-${CID}.scope`],
    ['systemd', 'guaranteed', `kubepods.slice/kubepods-pod${UID.replaceAll('-', '_')}.slice/cri-containerd-${CID}.scope`],
  ] as const)('%s/%s', (driver, qos, expected) => {
    const rel = containerCgroupRel(driver, qos, UID, CID);
    expect(rel).toBe(expected);
    expect(rel.startsWith(`${podCgroupRel(driver, qos, UID)}/`)).toBe(true);
    // Below a harness's own cgroup and the run root, as the sandbox creates them, on v1 and v2 lines.
    const text = `12:memory:/process_api/abc/attestorm/run-1-0a0b0c0d/${rel}\n1:cpu:/attestorm/run-1-0a0b0c0d/${rel}\n0::/\n`;
    expect(parseCgroup(text)).toEqual({ podUID: UID, containerID: CID });
    expect(parseCgroup(`0::/attestorm/run-1-0a0b0c0d/${rel}\n`)).toEqual({ podUID: UID, containerID: CID });
  });
});
