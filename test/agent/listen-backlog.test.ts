// The listener's backlog: the kernel's somaxconn, as a Go agent (SPIRE) listens, so a busy agent
// queues connections instead of refusing them.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenBacklog } from '../../src/agent/server.js';
import { skipNote } from '../support/skip-note.js';
import { startTestAgent, type TestAgent } from './harness.js';

describe('listenBacklog', () => {
  it('is the number in somaxconn', () => {
    expect(listenBacklog(() => '4096\n')).toBe(4096);
    expect(listenBacklog(() => '128')).toBe(128);
  });

  it("falls back to Node's default of 511 when somaxconn is unreadable or not a positive integer", () => {
    expect(
      listenBacklog(() => {
        throw new Error('ENOENT');
      }),
    ).toBe(511);
    expect(listenBacklog(() => '')).toBe(511);
    expect(listenBacklog(() => '0')).toBe(511);
    expect(listenBacklog(() => 'many')).toBe(511);
  });
});

// 1500 connections arrive while the agent's event loop is blocked: with Node's default backlog
// (511) about two thirds of them failed at once (EAGAIN, which gRPC clients report as UNAVAILABLE).
const CONNECTIONS = 1500;
const somaxconn = Number.parseInt(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'), 10);

describe.runIf(somaxconn > CONNECTIONS)('an agent whose event loop is busy', () => {
  let t: TestAgent;
  beforeAll(async () => {
    t = await startTestAgent();
  });
  afterAll(() => t?.stop());

  it(`queues ${CONNECTIONS} connections arriving at once instead of refusing any`, async () => {
    const client = `
      const net = require('node:net');
      const errors = {}; let connected = 0; let settled = 0; const sockets = [];
      for (let i = 0; i < ${CONNECTIONS}; i++) {
        const s = net.connect(process.argv[1]);
        sockets.push(s);
        s.on('connect', () => { connected++; if (++settled === ${CONNECTIONS}) done(); });
        s.on('error', (e) => { errors[e.code] = (errors[e.code] || 0) + 1; if (++settled === ${CONNECTIONS}) done(); });
      }
      function done() { console.log(JSON.stringify({ connected, errors })); for (const s of sockets) s.destroy(); }
    `;
    const result = new Promise<{ connected: number; errors: Record<string, number> }>((resolve, reject) => {
      execFile(process.execPath, ['-e', client, t.socketPath], { timeout: 20_000 }, (err, stdout) =>
        err ? reject(err as Error) : resolve(JSON.parse(stdout)),
      );
    });
    // Block this process (the agent's event loop) while the client connects.
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      /* busy */
    }
    const r = await result;
    expect(r.errors).toEqual({});
    expect(r.connected).toBe(CONNECTIONS);
  });
});

if (!(somaxconn > CONNECTIONS)) skipNote('the busy-listener backlog test', `net.core.somaxconn is ${somaxconn}, not above ${CONNECTIONS}`);
