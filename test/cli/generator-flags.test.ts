// A generator pod's command line: the renderer writes the load options as flags from the load
// generator's one flag table, and `attestorm kind generator` parses them back with the same table —
// options → flags → parsed options is the identity, for hand-picked options and for every pod a
// scenario renders.
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { generatorCommand } from '../../src/cli/cmd-kind.js';
import { ConfigError } from '../../src/errors.js';
import { renderScenario, type KubeObject } from '../../src/kube/index.js';
import { formatLoadFlags, GENERATOR_FLAGS, generatorLoadFromFlags, type GeneratorLoad } from '../../src/load/index.js';
import { parseScenario } from '../../src/scenario/index.js';

type Y = ReturnType<typeof yargs>;
const builder = generatorCommand.builder as (y: Y) => Y;

/** argv as yargs builds it for `attestorm kind generator [...args]`, defaults included. */
async function argvOf(args: string[]): Promise<Record<string, unknown>> {
  return (await builder(yargs(args).exitProcess(false).strict()).parse()) as Record<string, unknown>;
}

const roundTrip = async (load: GeneratorLoad) => generatorLoadFromFlags(await argvOf(formatLoadFlags(GENERATOR_FLAGS, load)));

const full: GeneratorLoad = {
  socket: '/run/attestorm/sockets/agent.sock',
  workersPerPod: 36,
  connection: 'per-retry',
  client: 'native',
  deadlineMs: 1234,
  retry: 'backoff',
  audience: 'spiffe://example.org/aud',
  methods: { FetchJWTSVID: 9, ValidateJWTSVID: 1, FetchX509SVID: 0 },
  rate: 2.5,
};

describe('generator flags from the load options', () => {
  it('options → flags → parsed options is the identity (whole milliseconds, every weight, a fractional rate)', async () => {
    expect(await roundTrip(full)).toEqual(full);
    const { rate: _closedLoop, ...closed } = full;
    expect(await roundTrip({ ...closed, client: 'grpc-js', connection: 'per-call', deadlineMs: 60_000, methods: { FetchX509Bundles: 1 } })).toEqual({
      ...closed,
      client: 'grpc-js',
      connection: 'per-call',
      deadlineMs: 60_000,
      methods: { FetchX509Bundles: 1 },
    });
  });

  it('every flag of the table is written for a full set of options, each once (methods: once per method)', () => {
    const args = formatLoadFlags(GENERATOR_FLAGS, full);
    const flags = args.filter((a) => a.startsWith('--'));
    expect([...new Set(flags)].sort()).toEqual(GENERATOR_FLAGS.map((f) => `--${f.flag}`).sort());
    expect(flags.filter((f) => f === '--method')).toHaveLength(3);
    expect(args.slice(args.indexOf('--client'), args.indexOf('--client') + 2)).toEqual(['--client', 'native']);
  });

  it("every pod a scenario renders parses back to the storm's and the bystanders' options, native client included", async () => {
    const { scenario } = parseScenario({
      name: 'flags',
      agent: { attestors: ['k8s'] },
      variants: [{ name: 'pre', agent: { placement: 'pre-attestation' } }],
      load: {
        pods: 2,
        workersPerPod: 7,
        client: 'native',
        connection: 'per-retry',
        deadline: '750ms',
        retry: 'backoff',
        rate: 40,
        methods: { FetchJWTSVID: 3, FetchX509SVID: 1 },
        audience: 'aud-x',
        bystanders: { pods: 1, workersPerPod: 2, rate: 1 },
      },
    });
    const [rendered] = renderScenario(scenario, { runId: 'flags', withSpire: true });
    const pods = rendered!.objects.filter((o: KubeObject) => o.kind === 'Pod' && (o.metadata.labels ?? {})['attestorm.dev/role'] !== undefined);
    const byRole = (role: string) => pods.filter((p) => p.metadata.labels!['attestorm.dev/role'] === role);
    const argsOf = (p: KubeObject) => ((p.spec as { containers: { args: string[] }[] }).containers[0]!.args as string[]).slice(2);
    expect(byRole('generator')).toHaveLength(2);
    expect(byRole('bystander')).toHaveLength(1);
    const storm = generatorLoadFromFlags(await argvOf(argsOf(byRole('generator')[0]!)));
    expect(storm).toEqual(rendered!.ctx.load.generator);
    expect(storm).toMatchObject({ client: 'native', workersPerPod: 7, deadlineMs: 750, rate: 40, methods: { FetchJWTSVID: 3, FetchX509SVID: 1 } });
    const bystander = generatorLoadFromFlags(await argvOf(argsOf(byRole('bystander')[0]!)));
    expect(bystander).toEqual(rendered!.ctx.load.bystanders!.generator);
    // The bystanders take the storm's client and audience, their own rate and one method.
    expect(bystander).toMatchObject({ client: 'native', audience: 'aud-x', workersPerPod: 2, rate: 1, methods: { FetchJWTSVID: 1 } });
  });

  it('a bad value is a ConfigError naming the flag and its rule', async () => {
    const problems = async (args: string[]) => {
      try {
        generatorLoadFromFlags(await argvOf(['--socket', '/s.sock', ...args]));
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).problems;
      }
      return [];
    };
    expect(await problems(['--deadline', 'soon'])).toEqual(['--deadline must be a duration like 500ms, 30s or 2m, got "soon"']);
    expect(await problems(['--workers', '0'])).toEqual(['--workers must be at least 1, got 0']);
    expect((await problems(['--method', 'Nope=2']))[0]).toMatch(/^--method must name one of FetchJWTSVID, /);
    expect(await problems([])).toEqual([]);
    expect(() => generatorLoadFromFlags({ workers: '1' })).toThrow(/--socket is required/);
  });

  it('--client lists native in its choices and its help', async () => {
    const help = await builder(yargs([]).exitProcess(false)).getHelp();
    const client = help.slice(help.indexOf('--client'), help.indexOf('--deadline'));
    expect(client).toContain('"native"');
    expect(client.replace(/\s+/g, ' ')).toMatch(/native = a small C program per worker/);
    await expect(argvOf(['--socket', '/s.sock', '--client', 'native'])).resolves.toMatchObject({ client: 'native' });
  });
});
