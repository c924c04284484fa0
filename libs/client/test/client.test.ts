import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { createGatehouseClient, GatehouseError, type ListItem, type ProblemDetails } from '../src';

jest.setTimeout(60_000);

type Expect<T extends true> = T;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

describe('@gatehouse/client', () => {
  let t: TestApp;
  let baseUrl: string;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp();
    ({ key } = await t.tenant());
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => t?.close());

  it('the generated types are those of the committed apps/api/openapi.json (npm run generate -w libs/client when not)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-client-'));
    try {
      const out = join(dir, 'schema.gen.ts');
      const cli = join(REPO_ROOT, 'node_modules/openapi-typescript/bin/cli.js');
      execFileSync(process.execPath, [cli, join(REPO_ROOT, 'apps/api/openapi.json'), '-o', out], { stdio: 'pipe' });
      expect(readFileSync(join(REPO_ROOT, 'libs/client/src/schema.gen.ts'), 'utf8')).toBe(readFileSync(out, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes typed calls, and iterates a list across pages through pagination.next', async () => {
    const client = createGatehouseClient({ baseUrl, apiKey: key });
    const names = ['client-a', 'client-b', 'client-c', 'client-d', 'client-e'];
    for (const name of names) {
      const created = await client.unwrap(client.api.POST('/applications', { body: { name, type: 'private', permissions: ['token:read'] } }));
      type _created = Expect<Equal<typeof created.name, string>>;
      expect(created.name).toBe(name);
    }
    const self = await client.unwrap(client.api.GET('/applications/key'));
    expect(self.type).toBe('management');

    const seen: string[] = [];
    const requests: string[] = [];
    const counting = createGatehouseClient({ baseUrl, apiKey: key, fetch: (req) => (requests.push(req.url), fetch(req)) });
    for await (const application of counting.paginate('/applications', { size: 2, type: ['private'] })) {
      type _item = Expect<Equal<typeof application, ListItem<'/applications'>>>;
      seen.push(application.name);
    }
    expect(seen.sort()).toEqual(names);
    // 5 items at 2 a page: 3 pages, the later ones asked with the cursor.
    expect(requests).toHaveLength(3);
    expect(requests.slice(1).every((url) => new URL(url).searchParams.has('start'))).toBe(true);
  });

  it("retries a 429 after the server's Retry-After, and succeeds", async () => {
    const admin = createGatehouseClient({ baseUrl, apiKey: key });
    const limited = await admin.unwrap(
      admin.api.POST('/applications', {
        body: { name: 'limited', type: 'management', permissions: ['application:read'], rate_limit: { limit: 1, window_seconds: 1 } },
      }),
    );
    const retries: Array<{ status: number; delayMs: number }> = [];
    const client = createGatehouseClient({
      baseUrl,
      apiKey: limited.key!,
      retry: { retries: 3, onRetry: ({ status, delayMs }) => retries.push({ status, delayMs }) },
    });
    const started = Date.now();
    for (let i = 0; i < 2; i++) expect((await client.unwrap(client.api.GET('/applications/key'))).name).toBe('limited');
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries[0].status).toBe(429);
    expect(retries[0].delayMs).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    // Without retries the 429 reaches the caller as a typed ProblemDetails.
    const impatient = createGatehouseClient({ baseUrl, apiKey: limited.key!, retry: { retries: 0 } });
    const outcomes = await Promise.allSettled([0, 1, 2].map(() => impatient.unwrap(impatient.api.GET('/applications/key'))));
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect((refused?.reason as GatehouseError).status).toBe(429);
  });

  it('answers errors as a GatehouseError carrying the typed ProblemDetails', async () => {
    const client = createGatehouseClient({ baseUrl, apiKey: key });
    const missing = await client.api.GET('/applications/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
    type _error = Expect<Equal<NonNullable<typeof missing.error>, ProblemDetails>>;
    expect(missing.error?.status).toBe(404);

    const error = await client.unwrap(client.api.POST('/applications', { body: { name: '', type: 'private', permissions: [] } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatehouseError);
    const problem = (error as GatehouseError).problem;
    expect(problem.status).toBe(400);
    expect(problem.errors).toBeDefined();

    const unauthenticated = createGatehouseClient({ baseUrl, apiKey: `key_${'0'.repeat(40)}`, retry: { retries: 0 } });
    await expect(unauthenticated.unwrap(unauthenticated.api.GET('/applications'))).rejects.toMatchObject({ status: 401, problem: { status: 401 } });
  });
});
