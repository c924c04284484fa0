import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, startCollector } from '@gatehouse/test-support/otlp-collector';
import { REPO_ROOT, ServiceProcess, startServiceProcess } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';

// The standard OpenTelemetry environment (OTEL_TRACES_SAMPLER(_ARG), OTEL_RESOURCE_ATTRIBUTES, the exporter's own
// variables), on the built service exporting to a local collector.
jest.setTimeout(120_000);

const SPAN_KIND_SERVER = 2;
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

async function managementKey(): Promise<string> {
  const admin = await startTestApp();
  try {
    return (await admin.tenant()).key;
  } finally {
    await admin.close();
  }
}

function startApi(env: Record<string, string>): Promise<ServiceProcess> {
  return startServiceProcess({ DATABASE_URL: TEST_DATABASE_URL, REACTOR_POOL_SIZE: '1', OTEL_BSP_SCHEDULE_DELAY: '100', ...env });
}

async function list(api: ServiceProcess, key: string, traceparent?: string): Promise<void> {
  const res = await fetch(`${api.baseUrl}/applications`, { headers: { 'svc-api-key': key, ...(traceparent ? { traceparent } : {}) } });
  expect(res.status).toBe(200);
}

const sampledParent = (traceId: string) => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;

describe('tracing: the standard OpenTelemetry environment', () => {
  let key: string;
  beforeAll(async () => (key = await managementKey()));

  it('OTEL_TRACES_SAMPLER=always_off exports nothing, not even under a sampled caller', async () => {
    const collector = await startCollector();
    const api = await startApi({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_TRACES_SAMPLER: 'always_off' });
    try {
      await list(api, key);
      await list(api, key, sampledParent(randomBytes(16).toString('hex')));
    } finally {
      // A clean stop flushes whatever the batch processor holds: nothing may be held.
      expect(await api.stop()).toBe(0);
      await collector.close();
    }
    expect(collector.spans).toEqual([]);
  });

  it('parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG=0 samples no root, and follows a sampled caller', async () => {
    const collector = await startCollector();
    const api = await startApi({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    const traceId = randomBytes(16).toString('hex');
    try {
      await list(api, key);
      await list(api, key, sampledParent(traceId));
      await eventually(
        () => collector.spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER),
        "the sampled caller's server span",
        () => collector.spans,
      );
    } finally {
      expect(await api.stop()).toBe(0);
      await collector.close();
    }
    // The root request (its server span and its SQL) was not sampled.
    expect(new Set(collector.spans.map((s) => s.traceId))).toEqual(new Set([traceId]));
  });

  it('OTEL_RESOURCE_ATTRIBUTES are on every exported span, beside service.name and service.version; the exporter reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', async () => {
    const collector = await startCollector();
    const api = await startApi({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.endpoint}/v1/traces`,
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,k8s.cluster.name=eu%2Cwest',
    });
    const traceId = randomBytes(16).toString('hex');
    try {
      await list(api, key, sampledParent(traceId));
      const server = await eventually(
        () => collector.spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER),
        'the server span',
        () => collector.spans,
      );
      expect(server.resource).toMatchObject({
        'service.name': 'gatehouse-api',
        'service.version': VERSION,
        'deployment.environment.name': 'staging',
        'k8s.cluster.name': 'eu,west',
        'telemetry.sdk.language': 'nodejs',
      });
    } finally {
      expect(await api.stop()).toBe(0);
      await collector.close();
    }
    expect(collector.spans.every((s) => s.resource['deployment.environment.name'] === 'staging')).toBe(true);
  });

  it('a service.name in OTEL_RESOURCE_ATTRIBUTES names the service, and OTEL_SERVICE_NAME wins over it', async () => {
    const collector = await startCollector();
    const named = await startApi({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_RESOURCE_ATTRIBUTES: 'service.name=edge-gatehouse' });
    const overridden = await startApi({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=edge-gatehouse',
      OTEL_SERVICE_NAME: 'gatehouse-eu',
    });
    const [first, second] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
    try {
      await list(named, key, sampledParent(first));
      await list(overridden, key, sampledParent(second));
      const a = await eventually(
        () => collector.spans.find((s) => s.traceId === first && s.kind === SPAN_KIND_SERVER),
        'the first server span',
        () => collector.spans,
      );
      const b = await eventually(
        () => collector.spans.find((s) => s.traceId === second && s.kind === SPAN_KIND_SERVER),
        'the second server span',
        () => collector.spans,
      );
      expect(a.service).toBe('edge-gatehouse');
      expect(b.service).toBe('gatehouse-eu');
    } finally {
      expect(await named.stop()).toBe(0);
      expect(await overridden.stop()).toBe(0);
      await collector.close();
    }
  });

  it('refuses an unknown OTEL_TRACES_SAMPLER with one line before starting', async () => {
    await expect(startApi({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'sometimes' })).rejects.toThrow(
      /process exited with 1 before listening:\ngatehouse: configuration error: OTEL_TRACES_SAMPLER must be one of/,
    );
  });
});
