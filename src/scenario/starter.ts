// The starter scenario `attestorm init` writes: a commented, runnable comparison of the three limiter
// placements that a user edits into their own. Its $schema line is made for the folder it lands in.
import { relative, resolve, sep } from 'node:path';
import { SCENARIO_JSON_SCHEMA_PATH } from './json-schema.js';

/** The file `attestorm init` writes into its folder. */
export const STARTER_FILE = 'attestorm.yaml';

/**
 * The schema as the YAML language server should find it from a file in dir: relative, so the line
 * keeps working when the project moves (node_modules/attestorm/scenarios/… after an npm install).
 */
export function schemaRefFrom(dir: string, schemaPath = SCENARIO_JSON_SCHEMA_PATH): string {
  const rel = relative(resolve(dir), schemaPath).split(sep).join('/');
  return rel.startsWith('../') ? rel : `./${rel}`;
}

export function starterScenario(schemaRef: string): string {
  return `# yaml-language-server: $schema=${schemaRef}
# A starter attestorm scenario. Check it:  npx attestorm validate ${STARTER_FILE}
# Run it (root, for the agent's memory cgroup):  sudo npx attestorm run ${STARTER_FILE}
# Every key is described in the schema named on the first line; editors with the YAML language
# server complete and check them as you type.
name: starter
description: >-
  One storm pod's forked workers call FetchJWTSVID in a tight loop, each call on a fresh connection,
  against the reference agent with its rate limiter before attestation, after it, and off.
# How long each variant's storm lasts (--duration overrides it), after a short warm-up.
duration: 20s
warmup: 1s
# The agent every variant starts from; a variant's own agent keys are merged over it.
agent:
  # The agent is OOM-killed past this (a memory cgroup with swap off): the verdict a limiter is judged by.
  memoryLimit: 128Mi
  # Kubernetes workload attestation against an emulated kubelet; each /pods answer takes 500 ms.
  attestors: [k8s]
  kubelet: { latency: 500ms, visibilityDelay: 0s }
  # Older agents: one GET /pods per attestation, and attestations that outlive their caller.
  k8s: { shareFetches: false }
  model: { cancelAbandoned: false }
  # Calls per second per caller (per pod before attestation, per identity after it).
  rateLimits: { fetch_jwt_svid: 10 }
  startTimeout: 60s
# The storm: pods × forked worker processes, each a caller with its own PID in its pod's cgroup.
load:
  pods: 1
  workersPerPod: 96
  connection: per-call
  deadline: 900ms
  retry: immediate
  methods: { FetchJWTSVID: 1 }
  # Well-behaved pods beside the storm: whether they keep getting identities is what a limiter is for.
  bystanders: { pods: 1, workersPerPod: 2, rate: 1 }
# The agent configurations compared under the same storm.
variants:
  - { name: pre-attestation, agent: { placement: pre-attestation } }
  - { name: post-attestation, agent: { placement: post-attestation } }
  - { name: disabled, agent: { placement: disabled } }
# What must hold (exit 1 when it does not). A storm the machine could not offer makes a variant
# inconclusive, never failed: minOfferedRps says how strong it has to be.
expect:
  pre-attestation: { minOfferedRps: 50, oomKilled: false, minBystanderSuccess: 0.8 }
`;
}
