// `attestorm load`'s flags and the scenario's `load` block: one defaults table. Every scenario load
// key has a flag, and the flags' defaults, parsed as the CLI parses them, equal the scenario's.
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { FLAGS, SCENARIO_LOAD_FLAGS, loadCommand, loadPlanFromArgs } from '../../src/cli/cmd-load.js';
import { parseScenario, scenarioJsonSchema } from '../../src/scenario/index.js';
import { useListeningSocket } from '../support/listening-socket.js';

const { socket } = useListeningSocket('attestorm-flags-');

/** argv as yargs builds it for `attestorm load --socket <s> [...args]`, defaults included. */
async function argvOf(args: string[]): Promise<Record<string, unknown>> {
  const y = (loadCommand.builder as (y: ReturnType<typeof yargs>) => ReturnType<typeof yargs>)(yargs(['--socket', socket, ...args]).exitProcess(false));
  return (await y.parse()) as Record<string, unknown>;
}

describe('attestorm load flags and the scenario load block', () => {
  const scenarioLoad = parseScenario({ name: 'defaults', variants: [{ name: 'a', agent: { placement: 'disabled' } }] }).scenario.load;

  it('every scenario load key has a flag (or says why not), each flag declared once', () => {
    const keys = Object.keys(SCENARIO_LOAD_FLAGS).sort();
    // The schema's keys, defaults or not (optional keys are absent from a parsed scenario).
    const schema = scenarioJsonSchema() as { properties: { load: { properties: Record<string, unknown> } } };
    expect(keys).toEqual(Object.keys(schema.properties.load.properties).sort());
    const names = FLAGS.map((f) => f.flag);
    expect(new Set(names).size).toBe(names.length);
    for (const [key, f] of Object.entries(SCENARIO_LOAD_FLAGS)) {
      if ('none' in f) expect(f.none.length, key).toBeGreaterThan(10);
      else expect(names, key).toContain(f.flag);
    }
  });

  it('the flags default to what a scenario without a load block runs', async () => {
    const plan = loadPlanFromArgs(await argvOf([]));
    const fromFlags: Record<string, unknown> = {
      pods: plan.load.pods,
      workersPerPod: plan.load.workersPerPod,
      connection: plan.load.connection,
      client: plan.load.client,
      rate: plan.load.rate,
      deadline: plan.load.deadlineMs,
      retry: plan.load.retry,
      methods: plan.load.methods,
      audience: plan.load.audience,
      podLifetime: plan.sandbox!.podLifetimeMs,
      uidMode: plan.sandbox!.uidMode ?? 'same',
      cgroupDriver: plan.sandbox!.cgroupDriver ?? 'cgroupfs',
      bystanders: undefined,
    };
    expect(Object.keys(fromFlags).sort()).toEqual(Object.keys(SCENARIO_LOAD_FLAGS).sort());
    for (const key of Object.keys(fromFlags)) expect(fromFlags[key], `load.${key}`).toEqual((scenarioLoad as Record<string, unknown>)[key]);
  });

  it('a flag sets what its scenario key sets', async () => {
    const plan = loadPlanFromArgs(
      await argvOf([
        '--pods',
        '3',
        '--workers',
        '7',
        '--deadline',
        '250ms',
        '--cgroup-driver',
        'systemd',
        '--pod-lifetime',
        '4s',
        '--method',
        'FetchJWTSVID=3',
        '--method',
        'ValidateJWTSVID',
      ]),
    );
    const s = parseScenario({
      name: 'set',
      load: { pods: 3, workersPerPod: 7, deadline: '250ms', cgroupDriver: 'systemd', podLifetime: '4s', methods: { FetchJWTSVID: 3, ValidateJWTSVID: 1 } },
      variants: [{ name: 'a', agent: { placement: 'disabled' } }],
    }).scenario.load;
    expect([plan.load.pods, plan.load.workersPerPod, plan.load.deadlineMs, plan.sandbox!.cgroupDriver, plan.sandbox!.podLifetimeMs, plan.load.methods]).toEqual(
      [s.pods, s.workersPerPod, s.deadline, s.cgroupDriver, s.podLifetime, s.methods],
    );
  });
});
