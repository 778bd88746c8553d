// The reference agent as the runner starts it: bundled to plain JavaScript and run with `node`, so
// no TypeScript loader memory is charged to the agent's cgroup. argv[2] is the agent YAML config.
// Prints one JSON ready line on stdout; exits 0 on SIGTERM, and when the runner's IPC channel closes
// (the runner died), so an agent never outlives its owner.
import { parseAgentConfig, readAgentConfigFile, startAgent } from '../agent/index.js';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: agent-entry <config.yaml>\n');
  process.exit(2);
}
try {
  const cfg = parseAgentConfig(readAgentConfigFile(file), `${file}: `);
  const agent = await startAgent(cfg);
  let closing = false;
  const stop = (code: number) => {
    if (closing) return;
    closing = true;
    agent.close().then(
      () => process.exit(code),
      () => process.exit(code),
    );
    // A drain that hangs (calls stuck in attestation) must not keep the process alive.
    setTimeout(() => process.exit(code), 3000).unref();
  };
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
  process.on('disconnect', () => stop(0));
  process.stdout.write(`${JSON.stringify({ event: 'ready', pid: process.pid, socket: agent.socketPath, metrics: agent.metricsUrl ?? null })}\n`);
} catch (err) {
  process.stderr.write(`attestorm agent: ${(err as Error).message}\n`);
  process.exit(2);
}
