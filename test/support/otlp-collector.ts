import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ExportedSpan {
  service: string;
  /** Every attribute of the resource the span was exported with (service.name, OTEL_RESOURCE_ATTRIBUTES...). */
  resource: Record<string, unknown>;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
}

export interface Collector {
  endpoint: string;
  spans: ExportedSpan[];
  /** Export requests received, spans or not. */
  requests: () => number;
  /** Every export request's body as received (events, status messages and all), for tests that scan it. */
  bodies: string[];
  server: Server;
  close: () => Promise<void>;
}

function attributeMap(attributes: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of attributes ?? []) out[a.key] = Object.values(a.value ?? {})[0];
  return out;
}

/** A local OTLP/HTTP (JSON) collector: what the SDK exports to `${endpoint}/v1/traces`. */
export async function startCollector(): Promise<Collector> {
  const spans: ExportedSpan[] = [];
  const bodies: string[] = [];
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        requests++;
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        const body = JSON.parse(bodies[bodies.length - 1]!);
        for (const resourceSpans of body.resourceSpans ?? []) {
          const resource = attributeMap(resourceSpans.resource?.attributes);
          const service = resource['service.name'] as string;
          for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
            for (const span of scopeSpans.spans ?? []) {
              const links = (span.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId }));
              spans.push({
                service,
                resource,
                scope: scopeSpans.scope?.name,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                kind: span.kind,
                attributes: attributeMap(span.attributes),
                links,
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    requests: () => requests,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Polls `find` for up to 15 s; the error shows what was there instead. */
export async function eventually<T>(find: () => T | undefined, what: string, all: () => unknown): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const found = find();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never saw ${what}; got:\n${JSON.stringify(all(), null, 1).slice(0, 4000)}`);
}
