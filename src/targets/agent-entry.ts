// The reference agent as the runner starts it: bundled to plain JavaScript and run with `node`, so
// no TypeScript loader memory is charged to the agent's cgroup. argv[2] is the agent YAML config.
// Prints one JSON ready line on stdout; stops as `attestorm agent` does (untilStopped: SIGTERM,
// SIGINT or the runner's IPC channel closing) and exits 0, so an agent never outlives its owner.
import { parseAgentConfig, readAgentConfigFile, readyLine, startAgent, STOP_GRACE_MS, untilStopped } from '../agent/index.js';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: agent-entry <config.yaml>\n');
  process.exit(2);
}
let agent;
try {
  const cfg = parseAgentConfig(readAgentConfigFile(file), `${file}: `);
  agent = await startAgent(cfg, { graceMs: STOP_GRACE_MS });
} catch (err) {
  process.stderr.write(`attestorm agent: ${(err as Error).message}\n`);
  process.exit(2);
}
const stopped = untilStopped(agent, (m) => process.stderr.write(`attestorm agent: ${m}\n`));
process.stdout.write(readyLine(agent));
await stopped;
process.exit(0);
