import { describe, expect, it } from 'vitest';
import { parseCgroup, parseCgroupPath } from '../../src/agent/cgroup-path.js';

const CID = '9bca8d63d5fa610783847915bcff0ecac1273e5b4bed3f6fa1b07350e0135961';
const KIND_NODE = 'a7d4c1b9e3f20865d1c0b7a9f8e6d5c4b3a29180f7e6d5c4b3a2918070605040';
const UID = '2c48913c-b29f-11e7-9350-020968147796';
const UID_US = UID.replaceAll('-', '_');

// A cgroup v1 file as a kubelet with the cgroupfs driver leaves it: every hierarchy names the pod.
function v1(path: string): string {
  return [`12:hugetlb:${path}`, `11:memory:${path}`, `10:cpu,cpuacct:${path}`, `9:pids:${path}`, `1:name=systemd:${path}`, '0::/', ''].join('\n');
}

describe('parseCgroup', () => {
  it('cgroupfs, besteffort and burstable QoS', () => {
    expect(parseCgroup(v1(`/kubepods/besteffort/pod${UID}/${CID}`))).toEqual({ podUID: UID, containerID: CID });
    expect(parseCgroup(v1(`/kubepods/burstable/pod${UID}/${CID}`))).toEqual({ podUID: UID, containerID: CID });
  });

  it('cgroupfs, guaranteed QoS (no QoS segment)', () => {
    expect(parseCgroup(v1(`/kubepods/pod${UID}/${CID}`))).toEqual({ podUID: UID, containerID: CID });
  });

  it('systemd slices with underscores, each runtime scope', () => {
    for (const scope of [`cri-containerd-${CID}.scope`, `docker-${CID}.scope`, `crio-${CID}.scope`]) {
      const path = `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_US}.slice/${scope}`;
      expect(parseCgroup(v1(path)), scope).toEqual({ podUID: UID, containerID: CID });
    }
    const guaranteed = `/kubepods.slice/kubepods-pod${UID_US}.slice/cri-containerd-${CID}.scope`;
    expect(parseCgroup(v1(guaranteed))).toEqual({ podUID: UID, containerID: CID });
  });

  it('cgroup v2 single line', () => {
    const text = `0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID_US}.slice/cri-containerd-${CID}.scope\n`;
    expect(parseCgroup(text)).toEqual({ podUID: UID, containerID: CID });
  });

  it('cri-o without a pod segment: container only', () => {
    expect(parseCgroup(`0::/crio-${CID}.scope\n`)).toEqual({ podUID: null, containerID: CID });
  });

  it('kind: a node container nesting kubepods; the last 64-hex segment is the container', () => {
    const path = `/docker/${KIND_NODE}/kubepods/besteffort/pod${UID}/${CID}`;
    expect(parseCgroup(v1(path))).toEqual({ podUID: UID, containerID: CID });
    const sysd = `/system.slice/docker-${KIND_NODE}.scope/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod${UID_US}.slice/cri-containerd-${CID}.scope`;
    expect(parseCgroup(`0::${sysd}\n`)).toEqual({ podUID: UID, containerID: CID });
  });

  it('arbitrary prefixes before kubepods (the sandbox nests pods under the harness cgroup)', () => {
    const text = [
      '9:name=systemd:/',
      '4:memory:/process_api/fded1f6e062bb17c07b3834ea103d397/attestorm-run1/kubepods/besteffort/pod' + UID + '/' + CID,
      '0::/',
    ].join('\n');
    expect(parseCgroup(text)).toEqual({ podUID: UID, containerID: CID });
  });

  it('static (mirror) pod UID: 32 hex without dashes', () => {
    const hash = '7b4fb4ccd7a42ab9d5c9aa8f9f09bbc6';
    expect(parseCgroup(`0::/kubepods/burstable/pod${hash}/${CID}`)).toEqual({ podUID: hash, containerID: CID });
  });

  it('sub-cgroups below the container still resolve', () => {
    expect(parseCgroupPath(`/kubepods/pod${UID}/${CID}/init`)).toEqual({ podUID: UID, containerID: CID });
  });

  it('plain docker (not kube): container present, pod null', () => {
    expect(parseCgroup(v1(`/docker/${CID}`))).toEqual({ podUID: null, containerID: CID });
  });

  it('prefers the line that names a pod over a container-only line', () => {
    const text = `5:cpu:/docker/${KIND_NODE}\n4:memory:/kubepods/pod${UID}/${CID}\n`;
    expect(parseCgroup(text)).toEqual({ podUID: UID, containerID: CID });
  });

  it('not in a pod: both null', () => {
    const cases = [
      '',
      '0::/\n',
      '0::/user.slice/user-1000.slice/session-2.scope\n',
      v1('/system.slice/containerd.service'),
      // a pod slice with no container below it (the pod's own cgroup)
      `0::/kubepods/besteffort/pod${UID}\n`,
      // 63 and 65 hex characters are not container IDs
      `0::/kubepods/pod${UID}/${CID.slice(1)}\n`,
      `0::/kubepods/pod${UID}/${CID}a\n`,
      // uppercase hex is not what runtimes write
      `0::/kubepods/pod${UID}/${CID.toUpperCase()}\n`,
      'garbage without colons\n',
      '4:memory:/process_api/fded1f6e062bb17c07b3834ea103d397\n',
    ];
    for (const text of cases) expect(parseCgroup(text), JSON.stringify(text)).toEqual({ podUID: null, containerID: null });
  });

  it('a pod segment below the container does not count', () => {
    expect(parseCgroupPath(`/docker/${CID}/pod${UID}`)).toEqual({ podUID: null, containerID: CID });
  });

  it('a "pod" word that is not a UID is ignored', () => {
    expect(parseCgroupPath(`/kubepods/podnotauid/${CID}`)).toEqual({ podUID: null, containerID: CID });
  });
});
