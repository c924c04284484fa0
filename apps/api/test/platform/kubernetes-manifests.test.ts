import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentedVariables, loadConfig, resolveLogSigningKey, resolveVaultKeys } from '@gatehouse/config';
import { K8sObject, KUBERNETES_DIR, kustomize, schemaErrors, unknownMemberErrors } from '@gatehouse/test-support/kubernetes';
import { REPO_ROOT } from '@gatehouse/test-support/service-process';

// deploy/kubernetes: the base and both overlays render (`kubectl kustomize`), every object is valid against the
// Kubernetes schemas, and what the manifests say of Gatehouse holds in its code: the variables they set are ones it
// reads, with values it accepts; probes name its routes; the drain fits the grace period.
jest.setTimeout(120_000);

const KUSTOMIZATIONS = ['base', 'overlays/production', 'overlays/evaluation'] as const;
const SECRETS_DIR = '/run/secrets/gatehouse';

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string }>;
  envFrom?: Array<{ configMapRef?: { name: string } }>;
  ports?: Array<{ name: string; containerPort: number }>;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { drop?: string[] } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  exec?: { command: string[] };
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: { runAsNonRoot?: boolean };
  terminationGracePeriodSeconds?: number;
  volumes?: Array<{ name: string; emptyDir?: unknown; secret?: { secretName: string } }>;
}

const rendered = Object.fromEntries(KUSTOMIZATIONS.map((k) => [k, kustomize(k)])) as Record<(typeof KUSTOMIZATIONS)[number], K8sObject[]>;
const find = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const podSpec = (object: K8sObject) => (object.spec as { template: { spec: PodSpec } }).template.spec;
const workloads = (objects: K8sObject[]) => objects.filter((o) => ['Deployment', 'Job', 'StatefulSet'].includes(o.kind));
const isGatehouse = (c: Container) => /(^|\/)gatehouse(:|@|$)/.test(c.image);
const gatehousePods = (objects: K8sObject[]) => workloads(objects).filter((o) => podSpec(o).containers.some(isGatehouse));
const allContainers = (spec: PodSpec) => [...(spec.initContainers ?? []), ...spec.containers];

/**
 * The variables Gatehouse knows: those of its configuration schema (libs/config/src/schema.ts, from which `.env.example`
 * and the README's configuration table are generated), NAME_FILE included where it may be read from a file.
 */
function knownVariables(): Set<string> {
  return new Set(documentedVariables().map((variable) => variable.name));
}

/** A container's environment as Kubernetes gives it: its ConfigMaps' data, then its own `env`. */
function environment(objects: K8sObject[], container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const map = find(objects, 'ConfigMap', from.configMapRef!.name);
    expect(map).toBeDefined();
    Object.assign(env, (map as { data?: Record<string, string> }).data);
  }
  for (const { name, value } of container.env ?? []) env[name] = value ?? '';
  return env;
}

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it.each(KUSTOMIZATIONS)('%s renders objects that kubernetes-models validates against the Kubernetes schemas', (dir) => {
    const objects = rendered[dir];
    expect(objects.length).toBeGreaterThan(5);
    expect(schemaErrors(objects)).toEqual([]);
  });

  it('every rendered object has only members its kind defines (a misspelt field fails), and the check catches one', () => {
    expect(unknownMemberErrors(Object.values(rendered).flat())).toEqual([]);
    const misspelt = structuredClone(find(rendered.base, 'Deployment', 'gatehouse-api')!);
    const api = podSpec(misspelt).containers[0] as unknown as Record<string, unknown>;
    api.readinesProbe = api.readinessProbe;
    delete api.readinessProbe;
    expect(schemaErrors([misspelt])).toEqual([]);
    expect(unknownMemberErrors([misspelt]).join('\n')).toMatch(/readinesProbe/);
  });

  it('runs the api and the worker apart, a migration Job before them, behind a Service and a PodDisruptionBudget', () => {
    for (const dir of KUSTOMIZATIONS) {
      const objects = rendered[dir];
      const api = find(objects, 'Deployment', 'gatehouse-api')!;
      const worker = find(objects, 'Deployment', 'gatehouse-worker')!;
      const job = find(objects, 'Job', 'gatehouse-migrate')!;
      expect(podSpec(api).containers[0]!.args).toBeUndefined(); // the image's command: main.js --api-only
      expect(podSpec(worker).containers[0]!.args).toEqual(['node', '--no-node-snapshot', '--enable-source-maps', 'dist/apps/worker/src/main.js']);
      expect(podSpec(job).containers[0]!.args).toEqual(['gatehouse', 'migrate']);
      for (const deployment of [api, worker]) {
        const [wait] = podSpec(deployment).initContainers ?? [];
        expect(wait?.command).toEqual(['sh', '-c', 'until gatehouse migrate check; do sleep 5; done']);
        expect(environment(objects, podSpec(deployment).containers[0]!).MIGRATE_ON_START).toBe('false');
      }
      expect(find(objects, 'Service', 'gatehouse-api')).toBeDefined();
      expect(find(objects, 'PodDisruptionBudget', 'gatehouse-api')).toMatchObject({ spec: { maxUnavailable: 1 } });
      for (const path of ['apps/worker/src/main.ts', 'apps/worker/src/healthcheck.ts', 'apps/api/src/main.ts'])
        expect(existsSync(join(REPO_ROOT, path))).toBe(true);
    }
  });

  it('sets only variables Gatehouse knows, secrets only as *_FILE under the mounted Secret', () => {
    const known = knownVariables();
    for (const dir of KUSTOMIZATIONS) {
      for (const workload of gatehousePods(rendered[dir])) {
        const spec = podSpec(workload);
        const secretVolume = spec.volumes?.find((v) => v.secret);
        expect(secretVolume?.secret?.secretName).toMatch(/^gatehouse-secrets/);
        for (const container of allContainers(spec).filter(isGatehouse)) {
          const env = environment(rendered[dir], container);
          const where = `${dir} ${workload.metadata.name}/${container.name}`;
          expect({ where, unknown: Object.keys(env).filter((name) => !known.has(name)) }).toEqual({ where, unknown: [] });
          for (const secret of ['DATABASE_URL', 'REDIS_URL', 'LOG_SIGNING_KEY', 'VAULT_KEY', 'BOOTSTRAP_MANAGEMENT_KEY']) expect(env[secret]).toBeUndefined();
          for (const [name, value] of Object.entries(env).filter(([name]) => name.endsWith('_FILE') && name !== 'WORKER_HEARTBEAT_FILE')) {
            expect(`${name}=${value}`).toMatch(new RegExp(`^${name}=${SECRETS_DIR}/[a-z-]+$`));
            expect(container.volumeMounts).toContainEqual(expect.objectContaining({ name: secretVolume!.name, mountPath: SECRETS_DIR }));
          }
        }
      }
    }
  });

  it("the evaluation overlay's values (its demo secrets included) are accepted by Gatehouse's configuration", () => {
    const objects = rendered['overlays/evaluation'];
    const secretFiles = join(KUBERNETES_DIR, 'overlays/evaluation/demo-secrets');
    for (const workload of gatehousePods(objects)) {
      for (const container of allContainers(podSpec(workload)).filter(isGatehouse)) {
        const env = environment(objects, container);
        // The Secret's files, as the pod would read them.
        for (const [name, value] of Object.entries(env))
          if (value.startsWith(`${SECRETS_DIR}/`)) env[name] = join(secretFiles, value.slice(SECRETS_DIR.length + 1));
        const config = loadConfig(env);
        if (config.logSigningKeyFile) expect(() => resolveLogSigningKey(config, { generate: false })).not.toThrow();
        if (config.vaultKeyFile) expect(() => resolveVaultKeys(config, { generate: false })).not.toThrow();
        if (env.BOOTSTRAP_MANAGEMENT_KEY_FILE) expect(config.bootstrapManagementKey).toMatch(/^key_/);
        expect(config.databaseUrl).toMatch(/^postgres:\/\/gatehouse:/);
      }
    }
  });

  it('probes name routes the api serves and ports its container opens, the console has a port and Service of its own; the worker probes its heartbeat', () => {
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'apps/api/openapi.json'), 'utf8')) as { paths: Record<string, { get?: unknown }> };
    for (const dir of KUSTOMIZATIONS) {
      const api = podSpec(find(rendered[dir], 'Deployment', 'gatehouse-api')!).containers[0]!;
      expect(api.livenessProbe?.httpGet?.path).toBe('/health/live');
      expect(api.readinessProbe?.httpGet?.path).toBe('/health/ready');
      for (const probe of [api.livenessProbe, api.readinessProbe, api.startupProbe]) {
        expect(document.paths[probe!.httpGet!.path]?.get).toBeDefined();
        expect(api.ports?.map((p) => p.name)).toContain(probe!.httpGet!.port);
      }
      const http = api.ports!.find((p) => p.name === 'http')!;
      expect(String(http.containerPort)).toBe(environment(rendered[dir], api).PORT);
      // The console on its own listener, behind a Service of its own: never the API's origin.
      const console = api.ports!.find((p) => p.name === 'console')!;
      expect(String(console.containerPort)).toBe(environment(rendered[dir], api).CONSOLE_PORT);
      expect(console.containerPort).not.toBe(http.containerPort);
      const services = rendered[dir].filter((o) => o.kind === 'Service') as Array<K8sObject & { spec: { ports: Array<{ targetPort: string }> } }>;
      expect(services.find((o) => o.metadata.name === 'gatehouse-console')?.spec.ports.map((p) => p.targetPort)).toEqual(['console']);
      expect(services.find((o) => o.metadata.name === 'gatehouse-api')?.spec.ports.map((p) => p.targetPort)).not.toContain('console');
      const worker = podSpec(find(rendered[dir], 'Deployment', 'gatehouse-worker')!).containers[0]!;
      expect(worker.livenessProbe?.exec?.command).toEqual(['node', 'dist/apps/worker/src/healthcheck.js']);
      expect(environment(rendered[dir], worker).WORKER_HEARTBEAT_FILE).toMatch(/^\/tmp\//);
    }
  });

  it("the api's preStop sleep, SHUTDOWN_DELAY_MS and the drain fit in terminationGracePeriodSeconds", () => {
    const drainMs = Number(/SHUTDOWN_GRACE_MS = ([\d_]+)/.exec(readFileSync(join(REPO_ROOT, 'apps/api/src/main.ts'), 'utf8'))![1]!.replace(/_/g, ''));
    for (const dir of KUSTOMIZATIONS) {
      const spec = podSpec(find(rendered[dir], 'Deployment', 'gatehouse-api')!);
      const api = spec.containers[0]!;
      const [sleep, seconds] = api.lifecycle!.preStop!.exec!.command;
      expect(sleep).toBe('sleep');
      const delayMs = Number(environment(rendered[dir], api).SHUTDOWN_DELAY_MS);
      expect(delayMs).toBeGreaterThan(0);
      expect(Number(seconds) * 1000).toBe(delayMs);
      expect(spec.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(Number(seconds) * 1000 + delayMs + drainMs);
    }
  });

  it('every Gatehouse pod is non-root with a read-only root file system, a writable /tmp and bounded resources', () => {
    for (const dir of KUSTOMIZATIONS) {
      for (const workload of gatehousePods(rendered[dir])) {
        const spec = podSpec(workload);
        expect(spec.securityContext?.runAsNonRoot).toBe(true);
        const tmp = spec.volumes?.find((v) => v.name === 'tmp');
        expect(tmp?.emptyDir).toBeDefined();
        for (const container of allContainers(spec)) {
          expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
          expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
          expect(Object.keys(container.resources?.requests ?? {}).sort()).toEqual(['cpu', 'memory']);
          expect(Object.keys(container.resources?.limits ?? {}).sort()).toEqual(['cpu', 'memory']);
        }
      }
    }
  });

  it('production: external PostgreSQL and Redis, no Secret in Git, several replicas; evaluation: one of each, its own databases', () => {
    const production = rendered['overlays/production'];
    expect(production.filter((o) => o.kind === 'Secret' || o.kind === 'StatefulSet' || /postgres|redis/.test(o.metadata.name))).toEqual([]);
    expect(find(production, 'Deployment', 'gatehouse-api')).toMatchObject({ spec: { replicas: 3 } });
    expect(find(production, 'Deployment', 'gatehouse-worker')).toMatchObject({ spec: { replicas: 2 } });
    const evaluation = rendered['overlays/evaluation'];
    for (const name of ['gatehouse-api', 'gatehouse-worker']) expect(find(evaluation, 'Deployment', name)).toMatchObject({ spec: { replicas: 1 } });
    expect(find(evaluation, 'StatefulSet', 'gatehouse-postgres')).toBeDefined();
    expect(find(evaluation, 'Deployment', 'gatehouse-redis')).toBeDefined();
  });
});
