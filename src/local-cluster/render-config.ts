// The cluster's configuration files and daemon command lines, rendered from the layout alone (pure:
// unit-tested without a machine). The settings are the ones this host needs (cgroup v1, no
// CAP_SYS_RESOURCE, no registry, no systemd): see docs/kubernetes.md.
import { join } from 'node:path';
import { BRIDGE, CNI_NETWORK, CONTEXT_NAME, PAUSE_IMAGE, POD_SUBNET, PORTS, SERVICE_SUBNET, binaries, type ClusterLayout } from './layout.js';

export function containerdConfig(l: ClusterLayout): string {
  return `version = 2
root = "${l.containerdRoot}"
state = "${l.containerdState}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "${l.containerdSocket}"

[plugins."io.containerd.internal.v1.opt"]
  path = "${join(l.containerdRoot, 'opt')}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # This host's VM lacks CAP_SYS_RESOURCE: without it runc cannot write oom_score_adj and every sandbox fails.
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${l.cniConfDir}"
`;
}

/** A bridge with host-local addresses; no masquerade and no default route: pods reach each other and the host's bridge address only. */
export function cniConfig(l: ClusterLayout): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: POD_SUBNET }]], dataDir: l.cniDataDir },
        },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  )}\n`;
}

export function kubeletConfig(l: ClusterLayout): string {
  const pki = l.certsDir;
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: ${PORTS.kubelet}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${PORTS.kubeletHealthz}
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://${l.containerdSocket}
failSwapOn: false
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: ${join(pki, 'ca.crt')}
authorization:
  mode: Webhook
tlsCertFile: ${join(pki, 'kubelet.crt')}
tlsPrivateKeyFile: ${join(pki, 'kubelet.key')}
# A small machine: evict late; images cannot be pulled again here, so never collect them.
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
resolvConf: ${join(l.stateDir, 'resolv.conf')}
clusterDomain: cluster.local
staticPodPath: ""
serializeImagePulls: false
`;
}

export interface KubeconfigUser {
  name: string;
  certPem: string;
  keyPem: string;
}

export function kubeconfig(caPem: string, user: KubeconfigUser, context = CONTEXT_NAME): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return `apiVersion: v1
kind: Config
clusters:
  - name: ${CONTEXT_NAME}
    cluster:
      server: https://127.0.0.1:${PORTS.apiServer}
      certificate-authority-data: ${b64(caPem)}
users:
  - name: ${user.name}
    user:
      client-certificate-data: ${b64(user.certPem)}
      client-key-data: ${b64(user.keyPem)}
contexts:
  - name: ${context}
    context:
      cluster: ${CONTEXT_NAME}
      user: ${user.name}
current-context: ${context}
`;
}

export interface DaemonSpec {
  name: 'containerd' | 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kubelet' | 'dockerd';
  exe: string;
  args: string[];
  /** Nice value: the cluster's daemons run at 0 (pods inherit containerd's); builds run at 19. */
  nice: number;
}

/** Every daemon in start order. */
export function daemonSpecs(l: ClusterLayout, containerdExe = '/usr/bin/containerd'): DaemonSpec[] {
  const b = binaries(l);
  const pki = (f: string) => join(l.certsDir, f);
  const kcfg = (who: string) => join(l.stateDir, `${who}.kubeconfig`);
  // controller-manager and scheduler use one kubeconfig for the API and for checking their callers.
  const apiClientFlags = (who: string) => ['--kubeconfig', '--authentication-kubeconfig', '--authorization-kubeconfig'].map((flag) => `${flag}=${kcfg(who)}`);
  return [
    { name: 'containerd', exe: containerdExe, nice: 0, args: ['--config', l.containerdConfig] },
    {
      name: 'etcd',
      exe: b.etcd,
      nice: 0,
      args: [
        '--name=attestorm-local',
        `--data-dir=${l.etcdData}`,
        `--listen-client-urls=http://127.0.0.1:${PORTS.etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${PORTS.etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${PORTS.etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${PORTS.etcdPeer}`,
        `--initial-cluster=attestorm-local=http://127.0.0.1:${PORTS.etcdPeer}`,
        '--listen-metrics-urls=',
        '--log-level=warn',
      ],
    },
    {
      name: 'kube-apiserver',
      exe: b.apiServer,
      nice: 0,
      args: [
        `--etcd-servers=http://127.0.0.1:${PORTS.etcdClient}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${PORTS.apiServer}`,
        `--tls-cert-file=${pki('apiserver.crt')}`,
        `--tls-private-key-file=${pki('apiserver.key')}`,
        `--client-ca-file=${pki('ca.crt')}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${pki('sa.pub')}`,
        `--service-account-signing-key-file=${pki('sa.key')}`,
        `--service-cluster-ip-range=${SERVICE_SUBNET}`,
        '--authorization-mode=Node,RBAC',
        '--enable-admission-plugins=NodeRestriction',
        '--allow-privileged=true',
        // logs, exec, port-forward and the pod proxy go through the kubelet with this identity.
        `--kubelet-client-certificate=${pki('apiserver-kubelet-client.crt')}`,
        `--kubelet-client-key=${pki('apiserver-kubelet-client.key')}`,
        `--kubelet-certificate-authority=${pki('ca.crt')}`,
        '--kubelet-preferred-address-types=Hostname,InternalIP',
        // Without the front proxy CA, controller-manager and scheduler log "missing content for CA bundle" forever.
        `--requestheader-client-ca-file=${pki('front-proxy-ca.crt')}`,
        '--requestheader-allowed-names=front-proxy-client',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-username-headers=X-Remote-User',
        `--proxy-client-cert-file=${pki('front-proxy-client.crt')}`,
        `--proxy-client-key-file=${pki('front-proxy-client.key')}`,
        '--v=1',
      ],
    },
    {
      name: 'kube-controller-manager',
      exe: b.controllerManager,
      nice: 0,
      args: [
        ...apiClientFlags('controller-manager'),
        '--bind-address=127.0.0.1',
        `--secure-port=${PORTS.controllerManager}`,
        // No pod CIDRs to hand out: the bridge's host-local IPAM owns the one subnet.
        '--controllers=*,-nodeipam',
        '--use-service-account-credentials',
        `--service-account-private-key-file=${pki('sa.key')}`,
        `--root-ca-file=${pki('ca.crt')}`,
        `--cluster-signing-cert-file=${pki('ca.crt')}`,
        `--cluster-signing-key-file=${pki('ca.key')}`,
        `--cluster-name=${CONTEXT_NAME}`,
        '--leader-elect=false',
        '--v=1',
      ],
    },
    {
      name: 'kube-scheduler',
      exe: b.scheduler,
      nice: 0,
      args: [...apiClientFlags('scheduler'), '--bind-address=127.0.0.1', `--secure-port=${PORTS.scheduler}`, '--leader-elect=false', '--v=1'],
    },
    {
      name: 'kubelet',
      exe: b.kubelet,
      nice: 0,
      args: [
        `--config=${join(l.stateDir, 'kubelet.yaml')}`,
        `--kubeconfig=${kcfg('kubelet')}`,
        `--root-dir=${l.kubeletRoot}`,
        `--hostname-override=${l.nodeName}`,
        '--v=1',
      ],
    },
  ];
}
