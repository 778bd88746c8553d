// What a run listens on over TCP stays on the machine: the kubelet emulator and the reference
// agent's metrics endpoint are bound to loopback, as the kernel's socket table (/proc/net/tcp*) says.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAgentConfig, startAgent } from '../../src/agent/index.js';
import { parseScenario, type ReferenceAgent } from '../../src/scenario/index.js';
import { buildAgentConfig } from '../../src/targets/index.js';
import { useKubeletEmulators } from '../support/kubelet-emulators.js';

const start = useKubeletEmulators();
const dir = mkdtempSync(join(tmpdir(), 'attestorm-loopback-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Local addresses of the listening TCP sockets on port, from /proc/net/tcp and tcp6 ("127.0.0.1", "::1", "0.0.0.0", ...). */
function listeningOn(port: number): string[] {
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4 || f[3] !== '0A') continue; // 0A: LISTEN
      const [hex, p] = f[1]!.split(':');
      if (parseInt(p!, 16) !== port) continue;
      out.push(hex!.length === 8 ? hexV4(hex!) : hex === '00000000000000000000000001000000' ? '::1' : hex === '0'.repeat(32) ? '::' : hex!);
    }
  }
  return out;
}

function hexV4(hex: string): string {
  // Little-endian on x86 and arm64: 0100007F is 127.0.0.1.
  return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');
}

const isLoopback = (a: string) => a.startsWith('127.') || a === '::1';

describe('TCP listeners are loopback only', () => {
  it('the kubelet emulator, with its default listen address', async () => {
    const k = await start({ podSource: () => [], fillerPods: 1 });
    const bound = listeningOn(Number(new URL(k.url).port));
    expect(bound.length).toBeGreaterThan(0);
    expect(bound.filter((a) => !isLoopback(a))).toEqual([]);
  });

  it("the reference agent's metrics endpoint, as the runner configures it", async () => {
    const { scenario } = parseScenario({ name: 'x' });
    const agent = scenario.variants[0]!.agent as ReferenceAgent;
    const cfg = buildAgentConfig(agent, { socket: join(dir, 'a.sock'), kubeletUrl: 'http://127.0.0.1:1', tokenFile: null, caFile: null });
    const running = await startAgent(parseAgentConfig({ socket: join(dir, 'a.sock'), metrics: cfg.metrics }));
    try {
      const bound = listeningOn(Number(new URL(running.metricsUrl!).port));
      expect(bound.length).toBeGreaterThan(0);
      expect(bound.filter((a) => !isLoopback(a))).toEqual([]);
    } finally {
      await running.close();
    }
  });
});
