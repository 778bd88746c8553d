// The node attestations spire-server completed, read from its log: every agent start (the first,
// and each restart whose agent cannot reuse its SVID) is one "Agent attestation request completed"
// line naming the agent's ID, which under k8s_psat ends in its node's UID.
import type { ServerRecord } from '../../contract/index.js';

const LINE = /msg="Agent attestation request completed"/;
const AGENT_ID = /agent_id="?spiffe:\/\/[^/\s"]+\/spire\/agent\/[^\s"]*\/([^/\s"]+)"?/;
const TIME = /time="([^"]+)"/;

/**
 * Counts the log's node attestations per node (`nodes`: node UID → name; an unknown UID is kept as
 * it is) and those at or after `since` (epoch ms; lines without a readable time count only in total).
 */
export function countAttestations(log: string, nodes: ReadonlyMap<string, string>, since: number): NonNullable<ServerRecord['attestations']> {
  const out = { total: 0, duringLoad: 0, byNode: {} as Record<string, number> };
  for (const line of log.split('\n')) {
    if (!LINE.test(line)) continue;
    out.total++;
    const uid = AGENT_ID.exec(line)?.[1];
    const node = uid ? (nodes.get(uid) ?? uid) : 'unknown';
    out.byNode[node] = (out.byNode[node] ?? 0) + 1;
    const at = Date.parse(TIME.exec(line)?.[1] ?? '');
    if (Number.isFinite(at) && at >= since) out.duringLoad++;
  }
  return out;
}
