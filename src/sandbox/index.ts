// The local pod sandbox: emulated Kubernetes pods in real cgroups, the kubelet emulator that lists
// them, and the cleanup of runs that were killed before they could clean up themselves.
export { createSandbox } from './sandbox.js';
export type { Sandbox, SandboxPod, PodMain, PodGroup } from './sandbox.js';
export { startKubeletEmulator } from './kubelet-emulator.js';
export type {
  KubeletEmulator,
  KubeletEmulatorStats,
  KubeletFaultControls,
  KubeletFaultState,
  PodListSnapshot,
  StartKubeletEmulatorOptions,
  KubeletRequestListener,
  KubeletRequestRecord,
} from './kubelet-emulator.js';
export { latencyModelSchema, modeledLatencyMs } from './latency-model.js';
export type { LatencyModel, ResolvedLatencyModel } from './latency-model.js';
export { parseSandboxOptions, parseKubeletOptions, DEFAULT_NODE_PODS, POD_LIST_LIMITS, PER_POD_UID_BASE, BYSTANDER_UID_BASE } from './options.js';
export type { SandboxOptions, KubeletEmulatorOptions, ResolvedSandboxOptions } from './options.js';
export { buildPodDoc, CONFIG_SEEN_ANNOTATION } from './pod-doc.js';
export type { PodDoc, PodDocInput } from './pod-doc.js';
export { containerCgroupRel, podCgroupRel } from './pod-cgroup-path.js';
export type { CgroupDriver, QosClass } from './pod-cgroup-path.js';
export { newRunId, ownerPidOf, runTempDir, tempRoot } from './run-id.js';
export { cleanupLeftovers } from './cleanup.js';
export { otherPodIds, podUidProblem } from './uid-reach.js';
export { assertOwnFolder, createRunFolder, ensureRunFolder, ensureRuntimeBase, runtimeBase, RUNTIME_DIR_ENV } from './runtime-dir.js';
export { runtimeSocketFailure, describeFilesystem } from './socket-probe.js';
export { loopbackFailures, type KubeletProbe } from './reach-probe.js';
