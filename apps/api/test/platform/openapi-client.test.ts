import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { REPO_ROOT } from '@gatehouse/test-support/service-process';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';

/**
 * A client generated from the committed document (openapi-typescript + openapi-fetch, as client teams do) types every
 * list, body and error, compiles under `tsc --strict`, and works against the real API.
 */

// A program a client team would write. Type assertions fail the compilation if an operation's data is `never` or
// mistyped; `@ts-expect-error` lines fail it if a wrong call is NOT an error.
const CLIENT_PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

type IsNever<T> = [T] extends [never] ? true : false;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
type Data<R> = NonNullable<R extends { data?: infer D } ? D : never>;
type ErrorOf<R> = NonNullable<R extends { error?: infer E } ? E : never>;

const client = createClient<paths>({ baseUrl: process.env.BASE_URL!, headers: { 'SVC-API-KEY': process.env.API_KEY! } });

async function main(): Promise<Record<string, unknown>> {
  const applications = await client.GET('/applications', { params: { query: { page: 1, size: 10, type: ['management'] } } });
  type _lists = [
    Expect<Equal<IsNever<Data<typeof applications>>, false>>,
    Expect<Equal<Data<typeof applications>['data'][number]['name'], string>>,
    Expect<Equal<Data<typeof applications>['pagination']['page_size'], number>>,
    Expect<Equal<Data<typeof applications>['pagination']['next'], string | undefined>>,
  ];

  const created = await client.POST('/proxies', {
    body: { name: 'generated', destination_url: 'https://api.example.com/v1/', configuration: { toString: 'kept' }, require_auth: false },
  });
  const proxyId: string = created.data!.id;
  const proxies = await client.GET('/proxies', { params: { query: { name: 'gener*' } } });
  type _proxies = [
    Expect<Equal<IsNever<Data<typeof proxies>>, false>>,
    Expect<Equal<Data<typeof proxies>['data'][number]['require_auth'], boolean>>,
    Expect<Equal<Data<typeof proxies>['data'][number]['configuration'], { [key: string]: string } | undefined>>,
  ];
  const patched = await client.PATCH('/proxies/{id}', {
    params: { path: { id: proxyId } },
    body: { name: 'generated, patched', request_transform: null, require_auth: null },
    headers: { 'content-type': 'application/merge-patch+json' },
  });

  const logs = await client.GET('/logs', { params: { query: { entity_type: 'proxy', size: 5 } } });
  const permissions = await client.GET('/permissions', { params: { query: { application_type: 'private' } } });
  type _others = [
    Expect<Equal<IsNever<Data<typeof logs>>, false>>,
    Expect<Equal<Data<typeof logs>['data'][number]['operation'], 'create' | 'update' | 'delete' | 'read'>>,
    Expect<Equal<IsNever<Data<typeof permissions>>, false>>,
    Expect<Equal<Data<typeof permissions>[number]['type'], string>>,
  ];

  const missing = await client.GET('/proxies/{id}', { params: { path: { id: '7d0f4a8e-1c2b-4d3e-9f60-123456789abc' } } });
  const refused = await client.GET('/applications', { params: { query: { size: 1000 } } });
  type _errors = [
    Expect<Equal<ErrorOf<typeof missing>, components['schemas']['ProblemDetails']>>,
    Expect<Equal<ErrorOf<typeof refused>['errors'], { [key: string]: string[] } | undefined>>,
  ];

  if (false as boolean) {
    // @ts-expect-error require_auth is a boolean
    await client.POST('/proxies', { body: { name: 'x', destination_url: 'https://a.example.com', require_auth: 'yes' } });
    // @ts-expect-error page is an integer, not a string
    await client.GET('/applications', { params: { query: { page: 'one' } } });
    // @ts-expect-error a PATCH name is a string
    await client.PATCH('/proxies/{id}', { params: { path: { id: proxyId } }, body: { name: 42 } });
    // @ts-expect-error no such operation
    await client.GET('/nowhere');
  }

  return {
    applications: [applications.response.status, applications.data?.data.map((a) => a.type)],
    created: [created.response.status, created.data?.configuration],
    proxies: [proxies.response.status, proxies.data?.data.map((p) => p.name)],
    patched: [patched.response.status, patched.data?.name, patched.data?.require_auth],
    logs: [logs.response.status, Array.isArray(logs.data?.data)],
    permissions: [permissions.response.status, permissions.data?.some((p) => p.type === 'token:read')],
    missing: [missing.response.status, missing.error?.status],
    refused: [refused.response.status, Object.keys(refused.error?.errors ?? {})],
  };
}

main().then((result) => process.stdout.write(JSON.stringify(result)), (error) => { console.error(error); process.exit(1); });
`;

describe('a client generated from the committed OpenAPI document', () => {
  const dir = join(REPO_ROOT, 'node_modules', '.cache', `gatehouse-openapi-client-${process.pid}`);
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    mkdirSync(dir, { recursive: true });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('compiles under tsc --strict, types lists, bodies and errors, and works against the API', async () => {
    const document = JSON.parse(readFileSync(join(REPO_ROOT, 'apps/api/openapi.json'), 'utf8'));
    writeFileSync(join(dir, 'schema.d.ts'), astToString(await openapiTS(document)));
    writeFileSync(join(dir, 'client.ts'), CLIENT_PROGRAM);

    const program = ts.createProgram([join(dir, 'client.ts')], {
      strict: true,
      noEmitOnError: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      esModuleInterop: true,
      skipLibCheck: true,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: ['node'],
      typeRoots: [join(REPO_ROOT, 'node_modules/@types')],
      outDir: dir,
    });
    const emitted = program.emit();
    const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);

    const { key } = await t.tenant();
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'client.js')], { env: { ...process.env, BASE_URL: baseUrl, API_KEY: key } });
    expect(JSON.parse(stdout)).toEqual({
      applications: [200, ['management']],
      created: [201, { toString: 'kept' }],
      proxies: [200, ['generated']],
      patched: [200, 'generated, patched', true],
      logs: [200, true],
      permissions: [200, true],
      missing: [404, 404],
      refused: [400, ['size']],
    });
  }, 60_000);
});
