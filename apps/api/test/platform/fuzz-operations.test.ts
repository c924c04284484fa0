import type { Response } from 'supertest';
import { answerClientErrors } from '../../src/http/client-errors';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, Caller, createApplication, expectProblem, managementWith, newTenant, VALID } from '../support/application-fixtures';
import { Json, openApiChecker } from '../support/openapi-document';
import { Case, describeCase, Finding, makeCase, makeProxyCase, TARGET_APPLICATION_BODY, TargetIds, targetProxyBody } from './fuzz/cases';
import { closeObjects, hash, prng } from './fuzz/generators';
import { check, OracleContext, send, shrink, snapshot } from './fuzz/oracle';

/**
 * The generated fuzz tier: for every operation of apps/api/openapi.json, cases from a seeded PRNG (valid bodies from
 * the document's examples and schemas, then mutations of bodies, query strings, path ids, keys and content types).
 * Each case: no 5xx; a 4xx is ProblemDetails as documented and changed nothing (the tenant's row counts, the target
 * application and proxy rows); a 2xx validates against the documented schema, and what a write answered is what a
 * read returns afterwards. On the data plane (/proxy): odd methods, paths, headers and bodies never make a 500.
 *
 * FUZZ_CASES=N (total, spread over the operations; default sized for `npm test`), FUZZ_SEED=S (default fixed;
 * `random` picks one). A failure prints the seed, the case and the smallest request that still fails, to replay.
 *
 * The PRNG and what it draws from: fuzz/generators.ts; the cases: fuzz/cases.ts; sending and judging them: fuzz/oracle.ts.
 */
const CASES = Number(process.env.FUZZ_CASES ?? 2500);
const SEED = process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 20260101);
const PROGRESS = process.env.FUZZ_PROGRESS === '1' || CASES > 5000;

jest.setTimeout(Math.max(120_000, CASES * 200));

describe(`fuzzed operations of the OpenAPI document (seed ${SEED}, ${CASES} cases)`, () => {
  const checker = openApiChecker();
  const { document } = checker;
  /**
   * The request schemas with every object closed (the contract refuses unknown fields, the document leaves
   * `additionalProperties` open): input these refuse must not be acknowledged with a 2xx.
   */
  const strict = openApiChecker(closeObjects(structuredClone(document)));
  let t: TestApp;
  let upstream: Upstream;
  let admin: Caller;
  let other: Caller;
  /** SVC-API-KEY values, by what they are. */
  const keys: Record<string, string> = {};
  /** Ids for path parameters: this tenant's targets and another tenant's. */
  const ids: TargetIds = {} as never;
  /** What the case builders and the oracle work on (set once the app runs). */
  let ctx: OracleContext;
  const findings = new Map<string, Finding>();
  /** Answers by operation and status, to show what the cases reached (printed with FUZZ_PROGRESS). */
  const statuses = new Map<string, Map<number, number>>();
  const count = (operation: string, status: number) => {
    const byStatus = statuses.get(operation) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    statuses.set(operation, byStatus);
  };
  /** Requests sent, by every test here. */
  const counter = { sent: 0 };
  const started = Date.now();

  beforeAll(async () => {
    upstream = await startUpstream(async (req, res) => {
      for await (const _ of req); // drain
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, url: req.url }));
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1', AUTH_THROTTLE_LIMIT: '0' });
    // As main.ts does on the server it listens with: a head Node's parser refuses gets a problem body too.
    answerClientErrors(t.app.getHttpServer());
    admin = await newTenant(t);
    other = await newTenant(t);
    keys.admin = admin.key;
    keys.other = other.key;
    keys.weak = (await managementWith(t, admin, ['log:read'])).key;
    keys.private = (await createApplication(t, admin.key, { ...VALID.private, permissions: ['token:read'] })).key;
    keys.public = (await createApplication(t, admin.key, VALID.public)).key;
    // The token vault's operations need token permissions, which no management key holds.
    keys.vault = (
      await createApplication(t, admin.key, {
        name: 'fuzz vault',
        type: 'private',
        permissions: ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'],
        rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read', 'token:use'] }],
      })
    ).key;
    keys.expiring = (
      await createApplication(t, admin.key, {
        ...VALID.expiring,
        rules: [{ priority: 1, conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }], transform: 'reveal', permissions: ['token:read'] }],
      })
    ).key;
    keys.otherPrivate = (await createApplication(t, other.key, { ...VALID.private, permissions: ['token:read'] })).key;
    keys.otherExpiring = (
      await createApplication(t, other.key, {
        ...VALID.expiring,
        rules: [{ priority: 1, conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }], transform: 'reveal', permissions: ['token:read'] }],
      })
    ).key;
    const gone = await managementWith(t, admin, ['application:read']);
    await as(t, admin.key).delete(`/applications/${gone.id}`).expect(204);
    keys.deleted = gone.key;
    const proxy = (await as(t, admin.key).post('/proxies', targetProxyBody(upstream.origin)).expect(201)).body;
    keys.proxy = proxy.key;
    ids.proxy = proxy.id;
    ids.application = (await createApplication(t, admin.key, TARGET_APPLICATION_BODY)).id;
    ids.otherApplication = (await createApplication(t, other.key, VALID.private)).id;
    ids.otherProxy = (await as(t, other.key).post('/proxies', targetProxyBody(upstream.origin)).expect(201)).body.id;
    ctx = { document, keys, ids, t, upstream, admin, other, checker, strict, counter };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
    if (PROGRESS) {
      for (const [operation, byStatus] of statuses) {
        const line = [...byStatus]
          .sort(([a], [b]) => a - b)
          .map(([status, n]) => `${status}:${n}`)
          .join(' ');
        process.stderr.write(`fuzz: ${operation.padEnd(38)} ${line}\n`);
      }
    }
    if (PROGRESS || findings.size > 0)
      process.stderr.write(
        `fuzz: seed ${SEED}, ${counter.sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s, ${findings.size} distinct findings\n`,
      );
  });

  const operations: [string, string][] = [];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    if (path.startsWith('/proxy') && !path.startsWith('/proxies')) continue; // the data plane: its own test below
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) if (item[method]) operations.push([method, path]);
  }
  const perOperation = Math.max(5, Math.ceil((CASES * 0.85) / operations.length));

  it.each(operations)(`%s %s: ${perOperation} generated cases, no 5xx, 4xx ProblemDetails changing nothing, 2xx as documented`, async (method, operation) => {
    const rng = prng(SEED ^ hash(`${method} ${operation}`));
    const local: string[] = [];
    for (let i = 0; i < perOperation; i++) {
      const c = makeCase(ctx, rng, method, operation);
      const { problem, res } = await check(ctx, c);
      count(`${method.toUpperCase()} ${operation}`, res?.status ?? 0);
      if (process.env.FUZZ_DEBUG && c.note.includes('valid body') && res && res.status >= 400)
        process.stderr.write(`${c.note} ${c.body} -> ${res.status} ${res.text.slice(0, 300)}\n`);
      if (PROGRESS && counter.sent % 1000 === 0)
        process.stderr.write(`fuzz: ${counter.sent} requests, ${((Date.now() - started) / 1000).toFixed(0)} s, ${findings.size} distinct findings\n`);
      if (!problem) continue;
      const signature = `${method.toUpperCase()} ${operation}: ${problem
        .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<uuid>')
        .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
        .replace(/in (\w+): wrote .*/, 'in $1')
        .slice(0, 160)}`;
      if (findings.has(signature)) continue;
      const minimal = await shrink(ctx, c, problem);
      const finding = { signature, message: problem, request: minimal, status: res?.status ?? 0, response: (res?.text ?? '').slice(0, 500) };
      findings.set(signature, finding);
      local.push(`case ${i} (FUZZ_SEED=${SEED}): ${problem}\n  ${describeCase(minimal)}\n  answered ${finding.status}: ${finding.response}`);
    }
    if (local.length) throw new Error(`${local.length} distinct findings:\n${local.join('\n\n')}`);
  });

  it('methods the document does not list for a path are a 4xx ProblemDetails that changes nothing', async () => {
    const local: string[] = [];
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      if (path.startsWith('/proxy') && !path.startsWith('/proxies')) continue;
      for (const method of ['get', 'post', 'put', 'patch', 'delete', 'options', 'head', 'propfind', 'search', 'purge']) {
        if (item[method] || (method === 'head' && item.get)) continue; // HEAD is GET without the body (RFC 9110 9.3.2)
        const url = path.replace('{id}', path.startsWith('/proxies') ? ids.proxy : ids.application);
        const c: Case = {
          method,
          operation: path,
          url,
          headers: { 'svc-api-key': keys.admin!, 'content-type': 'application/json' },
          body: method === 'get' || method === 'head' ? undefined : '{"name":"x"}',
          note: 'undocumented method',
        };
        const before = await snapshot(ctx);
        const res = await send(t, c);
        counter.sent++;
        count(`${method.toUpperCase()} ${path} (undocumented)`, res.status);
        let problem: string | undefined;
        if (res.status < 400 || res.status >= 500) problem = `a ${res.status}`;
        else if (method !== 'head') {
          try {
            expectProblem(res, res.status);
          } catch (error) {
            problem = (error as Error).message.split('\n')[0];
          }
        }
        if (!problem && (await snapshot(ctx)) !== before) problem = `state changed on a ${res.status}`;
        if (problem) local.push(`${problem}\n  ${describeCase(c)}\n  answered ${res.status}: ${res.text?.slice(0, 300)}`);
      }
    }
    if (local.length) throw new Error(`${local.length} findings:\n${local.join('\n\n')}`);
  });

  // ---------------------------------------------------------------------------------------------------------------
  // The data plane: /proxy with SVC-PROXY-KEY, odd methods, paths, headers and bodies

  it(`/proxy: ${Math.max(20, Math.ceil(CASES * 0.15))} generated invocations never answer a 500 or hang`, async () => {
    const rng = prng(SEED ^ hash('/proxy'));
    const api = as(t, admin.key);
    const proxies = {
      open: (await api.post('/proxies', { name: 'open', destination_url: `${upstream.origin}/base/`, require_auth: false }).expect(201)).body.key,
      guarded: (await api.post('/proxies', { name: 'guarded', destination_url: `${upstream.origin}/` }).expect(201)).body.key,
      transformed: (
        await api
          .post('/proxies', {
            name: 'transformed',
            destination_url: `${upstream.origin}/`,
            require_auth: false,
            request_transform: { code: 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });' },
            response_transform: { code: 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });' },
          })
          .expect(201)
      ).body.key,
    } as Record<string, string>;
    const local: string[] = [];
    const total = Math.max(20, Math.ceil(CASES * 0.15));
    for (let i = 0; i < total; i++) {
      const c = makeProxyCase(keys, rng, proxies);
      let res: Response | undefined;
      let problem: string | undefined;
      try {
        res = await send(t, c);
        counter.sent++;
        count(`${c.method.toUpperCase()} /proxy`, res.status);
        if (res.status === 500) problem = 'a 500';
        else if (res.status >= 400 && res.status !== 502 && !String(res.headers['content-type']).startsWith('application/problem+json'))
          problem = `a ${res.status} that is not ProblemDetails`;
      } catch (error) {
        problem = `no answer: ${(error as Error).message}`;
      }
      if (!problem) continue;
      const signature = `${c.method.toUpperCase()} /proxy: ${problem}`;
      if (findings.has(signature)) continue;
      findings.set(signature, { signature, message: problem, request: c, status: res?.status ?? 0, response: (res?.text ?? '').slice(0, 500) });
      local.push(`case ${i} (FUZZ_SEED=${SEED}): ${problem}\n  ${describeCase(c)}\n  answered ${res?.status}: ${(res?.text ?? '').slice(0, 500)}`);
    }
    if (local.length) throw new Error(`${local.length} distinct findings:\n${local.join('\n\n')}`);
  });
});
