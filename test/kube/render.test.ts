// Rendered manifests of every shipped scenario, validated against the Kubernetes OpenAPI schemas
// (kubernetes-models) and against the checks those schemas do not make.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Pod, Namespace, ServiceAccount, ConfigMap, Service } from 'kubernetes-models/v1';
import { DaemonSet, Deployment } from 'kubernetes-models/apps/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { parse as parseYaml } from 'yaml';
import { parseAgentConfig } from '../../src/agent/index.js';
import { readScenarioFile } from '../../src/scenario/index.js';
import { manifestProblems, renderScenario, renderContext, clusterVariants, renderVariant, quantity } from '../../src/kube/index.js';

const MODELS: Record<string, new (o: any) => { validate(): void }> = {
  Pod,
  Namespace,
  ServiceAccount,
  ConfigMap,
  Service,
  DaemonSet,
  Deployment,
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
};

const scenarioDir = join(import.meta.dirname, '../../scenarios');
const files = readdirSync(scenarioDir).filter((f) => f.endsWith('.yaml'));

describe('kind render: every shipped scenario', () => {
  it('finds the shipped scenarios', () => expect(files.length).toBeGreaterThanOrEqual(7));
  for (const file of files) {
    it(`${file}: every object of every variant (and a SPIRE variant) passes the OpenAPI schema and our checks`, async () => {
      const { scenario } = readScenarioFile(join(scenarioDir, file));
      const rendered = renderScenario(scenario, { runId: `${scenario.name}-20261201-040000`, withSpire: true });
      const names = scenario.variants.map((v) => v.name);
      expect(rendered.map((r) => r.variant.name)).toEqual(scenario.variants.some((v) => v.agent.kind === 'spire') ? names : [...names, 'spire']);
      for (const r of rendered) {
        for (const o of r.objects) {
          const Model = MODELS[o.kind];
          expect(Model, `no model for ${o.kind}`).toBeDefined();
          expect(() => new Model!(o).validate(), `${r.variant.name}: ${o.kind} ${o.metadata.name}`).not.toThrow();
        }
        expect(manifestProblems(r.objects, r.ctx)).toEqual([]);
        const agent = r.objects.find((o) => o.kind === 'DaemonSet') as any;
        const c = agent.spec.template.spec.containers[0];
        const own = scenario.variants.find((v) => v.name === r.variant.name)?.agent ?? scenario.variants[0]!.agent;
        expect(c.resources.limits.memory).toBe(quantity(own.memoryLimit!));
        expect(c.resources.requests.memory).toBe(c.resources.limits.memory);
        const role = (o: any) => o.metadata.labels['attestorm.dev/role'];
        expect(r.objects.filter((o) => o.kind === 'Pod' && role(o) === 'generator')).toHaveLength(scenario.load.pods);
        expect(r.objects.filter((o) => o.kind === 'Pod' && role(o) === 'bystander')).toHaveLength(scenario.load.bystanders?.pods ?? 0);
        if (r.variant.kind === 'reference') {
          // The ConfigMap is what the agent in the pod reads: the agent's own schema accepts it.
          const cm = r.objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'agent-config') as any;
          const cfg = parseAgentConfig(parseYaml(cm.data['agent.yaml']));
          expect(cfg.socket).toBe('/run/attestorm/sockets/agent.sock');
          expect(cfg.k8s).toMatchObject({
            kubeletUrl: 'https://127.0.0.1:10250',
            skipVerify: true,
            tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
          });
          expect(cfg.rateLimit.placement).toBe(r.variant.placement);
        } else {
          const agentConf = (r.objects.find((o) => o.metadata.name === 'spire-agent-config') as any).data['agent.conf'];
          expect(agentConf).toContain(`cluster = "attestorm"`);
          expect(agentConf).toContain('skip_kubelet_verification = true');
          const serverConf = (r.objects.find((o) => o.metadata.name === 'spire-server-config') as any).data['server.conf'];
          expect(serverConf).toContain(`service_account_allow_list = ["${r.ctx.namespace}:agent"]`);
        }
      }
    });
  }
});

describe('bystander pods (load.bystanders)', () => {
  const render = async (bystanders: Record<string, unknown>) => {
    const { scenario } = readScenarioFile(join(scenarioDir, 'quick.yaml'));
    const s = { ...scenario, load: { ...scenario.load, bystanders: { ...scenario.load.bystanders!, ...bystanders } } };
    const variant = clusterVariants(s, { runId: 'bys-1' })[0]!;
    const ctx = renderContext(s, variant, { runId: 'bys-1' });
    return { ctx, objects: renderVariant(ctx) as any[] };
  };

  it('run the generator process with the bystander settings, in pods and under labels of their own', async () => {
    const { ctx, objects } = await render({
      pods: 2,
      workersPerPod: 3,
      rate: 2.5,
      deadline: 4000,
      retry: 'backoff',
      connection: 'per-worker',
      method: 'FetchX509SVID',
    });
    const bys = objects.filter((o) => o.metadata.labels['attestorm.dev/role'] === 'bystander');
    expect(bys.map((o) => o.metadata.name)).toEqual(['bystander-0', 'bystander-1']);
    for (const o of bys) {
      expect(() => new Pod(o).validate()).not.toThrow();
      const c = o.spec.containers[0];
      const storm = objects.find((p) => p.metadata.name === 'generator-0').spec.containers[0];
      expect(c.image).toBe(storm.image);
      expect(c.command).toEqual(storm.command);
      const args = c.args.join(' ');
      expect(args).toContain('kind generator --socket /run/attestorm/sockets/agent.sock --workers 3 --connection per-worker');
      expect(args).toContain('--connection per-worker --client h2 --deadline 4000ms --retry backoff');
      expect(args).toContain('--method FetchX509SVID=1 --rate 2.5 --port 9100');
      expect(c.args.filter((a: string) => a === '--method')).toHaveLength(1);
      expect(o.spec.securityContext.runAsUser).toBe(1000);
    }
    expect(manifestProblems(objects, ctx)).toEqual([]);
  });

  it("uid own: a uid of their own (the storm keeps 1000), in the image's group", async () => {
    const { objects } = await render({ uid: 'own' });
    const bys = objects.find((o) => o.metadata.name === 'bystander-0');
    expect(bys.spec.securityContext).toEqual({ runAsUser: 1001, runAsGroup: 1000, runAsNonRoot: true });
    expect(objects.find((o) => o.metadata.name === 'generator-0').spec.securityContext.runAsUser).toBe(1000);
  });

  it('a bystander pod without the shared socket is named like a generator pod', async () => {
    const { ctx, objects } = await render({});
    objects.find((o) => o.metadata.name === 'bystander-0').spec.volumes = [];
    expect(manifestProblems(objects, ctx).join('\n')).toContain('Pod ' + ctx.namespace + '/bystander-0: must mount the shared socket directory');
  });
});

describe('the checks kubernetes-models does not make', () => {
  const base = async () => {
    const { scenario } = readScenarioFile(join(scenarioDir, 'quick.yaml'));
    const variant = clusterVariants(scenario, { runId: 'quick-1' })[0]!;
    const ctx = renderContext(scenario, variant, { runId: 'quick-1' });
    return { ctx, objects: renderVariant(ctx) };
  };
  const agentSpec = (objects: any[]) => objects.find((o) => o.kind === 'DaemonSet').spec.template.spec;

  it('kubernetes-models accepts a misspelled hostPid; ours names it and suggests hostPID', async () => {
    const { ctx, objects } = await base();
    const spec = agentSpec(objects);
    delete spec.hostPID;
    spec.hostPid = true;
    const ds = objects.find((o) => o.kind === 'DaemonSet')!;
    expect(() => new DaemonSet(ds as any).validate()).not.toThrow();
    const problems = manifestProblems(objects, ctx);
    expect(problems.join('\n')).toContain('spec.template.spec.hostPid is not a field of V1PodSpec (did you mean hostPID?)');
    expect(problems.join('\n')).toContain('must run with hostPID: true');
  });

  it('kubernetes-models does reject what the schema forbids (a string hostPID, a missing container image type)', async () => {
    const { objects } = await base();
    const ds = objects.find((o) => o.kind === 'DaemonSet') as any;
    ds.spec.template.spec.hostPID = 'yes';
    expect(() => new DaemonSet(ds).validate()).toThrow(/hostPID/);
  });

  it('kubernetes-models accepts a bad name; ours rejects it', async () => {
    const { ctx, objects } = await base();
    const pod = objects.find((o) => o.kind === 'Pod')!;
    pod.metadata.name = 'Generator_0';
    expect(() => new Pod(pod as any).validate()).not.toThrow();
    expect(manifestProblems(objects, ctx).join('\n')).toContain('metadata.name must be a DNS-1123 label, got "Generator_0"');
  });

  it("a generator without the shared socket hostPath, or a limit that is not the scenario's, is named", async () => {
    const { ctx, objects } = await base();
    const pod = objects.find((o) => o.kind === 'Pod') as any;
    pod.spec.volumes[0].hostPath.path = '/tmp/elsewhere';
    const c = agentSpec(objects).containers[0];
    c.resources.limits.memory = '256Mi';
    const text = manifestProblems(objects, ctx).join('\n');
    expect(text).toContain('volume agent-socket must be hostPath /run/attestorm/');
    expect(text).toContain(`resources.limits.memory must be the variant's memory limit ${ctx.variant.memoryLimitBytes} bytes, got 256Mi`);
    expect(text).toContain('resources.requests.memory must equal limits.memory');
  });

  it('long run ids still give DNS-1123 namespaces', async () => {
    const { scenario } = readScenarioFile(join(scenarioDir, 'quick.yaml'));
    const rendered = renderScenario(scenario, { runId: `${'x'.repeat(80)}-20261201`, rep: 12 });
    for (const r of rendered) expect(r.ctx.namespace.length).toBeLessThanOrEqual(63);
    expect(new Set(rendered.map((r) => r.ctx.namespace)).size).toBe(rendered.length);
  });
});

describe("a SPIRE variant's agent.env", () => {
  it('reaches the agent container as env entries, and only where the variant sets it', async () => {
    const { parseScenario } = await import('../../src/scenario/index.js');
    const { scenario } = parseScenario({
      name: 'spire-env',
      variants: [
        { name: 'tuned', agent: { kind: 'spire', env: { GOMAXPROCS: '1', GRPC_GO_EXPERIMENTAL_CONTROL_BUFFER_THROTTLE_LIMIT: '10000' } } },
        { name: 'plain', agent: { kind: 'spire' } },
      ],
    });
    const rendered = renderScenario(scenario, { runId: 'spire-env-20261207-120000' });
    const containerOf = (name: string) => {
      const r = rendered.find((x) => x.variant.name === name)!;
      return (r.objects.find((o) => o.kind === 'DaemonSet') as any).spec.template.spec.containers[0];
    };
    expect(containerOf('tuned').env).toEqual([
      { name: 'GOMAXPROCS', value: '1' },
      { name: 'GRPC_GO_EXPERIMENTAL_CONTROL_BUFFER_THROTTLE_LIMIT', value: '10000' },
    ]);
    expect(containerOf('plain').env).toBeUndefined();
    for (const r of rendered) for (const o of r.objects) expect(() => new MODELS[o.kind]!(o).validate()).not.toThrow();
  });

  it('refuses a name that is not an environment variable, naming the path', async () => {
    const { parseScenario } = await import('../../src/scenario/index.js');
    expect(() => parseScenario({ name: 'bad-env', variants: [{ name: 'v', agent: { kind: 'spire', env: { 'GO MAXPROCS': '1' } } }] })).toThrow(
      /variants\[0\]\.agent\.env\.GO MAXPROCS: "GO MAXPROCS" must be an environment variable name/,
    );
  });
});
