import type { Response } from 'supertest';
import type { TestApp } from '@gatehouse/test-support/test-app';
import type { Upstream } from '@gatehouse/test-support/upstream';
import { as, Caller, createApplication, expectProblem, rowCounts } from '../../support/application-fixtures';
import type { Json, openApiChecker } from '../../support/openapi-document';
import { Case, CaseContext, TARGET_APPLICATION_BODY, targetProxyBody } from './cases';
import { queryOutsideSchema } from './generators';

/**
 * The fuzz tier's oracle (../fuzz-operations.test.ts): sends a case, judges the answer against the document and the
 * stored state, and shrinks a failing case to the smallest request that still fails the same way.
 */

/** What the oracle works on: the running app, its callers, the checkers of the document, and the request count. */
export interface OracleContext extends CaseContext {
  t: TestApp;
  upstream: Upstream;
  admin: Caller;
  other: Caller;
  checker: ReturnType<typeof openApiChecker>;
  /** The request schemas with every object closed: input these refuse must not be acknowledged with a 2xx. */
  strict: ReturnType<typeof openApiChecker>;
  /** Requests sent so far, by every test of the file. */
  counter: { sent: number };
}

/** Sends a case as generated: its method, url, headers and raw bytes. */
export async function send(t: TestApp, c: Case): Promise<Response> {
  let req = (t.http() as any)[c.method](c.url) as import('supertest').Test;
  for (const [k, v] of Object.entries(c.headers)) req = req.set(k, v as string);
  // The bytes as generated: superagent would otherwise serialise a Buffer as JSON ({"type":"Buffer",...}) for a JSON type.
  if (c.body !== undefined && c.body !== '') req = req.serialize((x: unknown) => x as string).send(Buffer.isBuffer(c.body) ? c.body : Buffer.from(c.body));
  return req.timeout(15_000);
}

/** The state a refused request must leave alone: both tenants' row counts and the target rows. */
export async function snapshot({ t, ids, admin, other }: OracleContext): Promise<string> {
  const [application] = await t.database.dataSource.query('SELECT * FROM applications WHERE id = $1', [ids.application]);
  const [proxy] = await t.database.dataSource.query('SELECT * FROM proxies WHERE id = $1', [ids.proxy]);
  const [otherApplication] = await t.database.dataSource.query('SELECT * FROM applications WHERE id = $1', [ids.otherApplication]);
  const [otherProxy] = await t.database.dataSource.query('SELECT * FROM proxies WHERE id = $1', [ids.otherProxy]);
  return JSON.stringify({
    own: await rowCounts(t, admin.tenantId),
    other: await rowCounts(t, other.tenantId),
    application,
    proxy,
    otherApplication,
    otherProxy,
  });
}

/** Runs one case; returns what is wrong with the answer (undefined if nothing). */
export async function check(ctx: OracleContext, c: Case): Promise<{ problem?: string; res?: Response }> {
  const before = await snapshot(ctx);
  let res: Response;
  try {
    res = await send(ctx.t, c);
  } catch (error) {
    return { problem: `no answer: ${(error as Error).message}` };
  } finally {
    ctx.counter.sent++;
  }
  const method = c.method;
  try {
    if (res.status >= 500) return { problem: `a ${res.status}`, res };
    ctx.checker.conforms(method, c.operation, res);
    if (res.status >= 400) {
      expectProblem(res, res.status);
      const after = await snapshot(ctx);
      if (after !== before) return { problem: `state changed on a ${res.status}`, res };
    } else {
      const outside = outsideSchema(ctx, c);
      if (outside) return { problem: `a ${res.status} for input the document refuses: ${outside}`, res };
      await afterSuccess(ctx, c, res);
    }
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]!.replace(/\s+/g, ' ');
    return { problem: message, res };
  }
  return { res };
}

/** Why the request is outside what the document accepts (query and JSON body), or undefined if it is within or unclear. */
function outsideSchema({ document, strict }: OracleContext, c: Case): string | undefined {
  const op = document.paths[c.operation][c.method];
  const search = c.url.includes('?') ? c.url.slice(c.url.indexOf('?') + 1) : '';
  const parameters = (op.parameters ?? []).concat([{ name: 'svc-api-key', in: 'query', schema: { type: 'string' } }]);
  const query = queryOutsideSchema(document, parameters, search);
  if (query) return query;
  const requestBody = op.requestBody;
  if (!requestBody || c.body === undefined || c.body === '' || Buffer.isBuffer(c.body)) return undefined;
  const [media] = Object.keys(requestBody.content);
  if (String(c.headers['content-type'] ?? '') !== media) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(c.body.replace(/^\ufeff/, '')); // docs/security.md (strict input): a leading byte order mark is ignored
  } catch {
    return 'a body that is not JSON';
  }
  const validate = strict.validatorAt(['paths', c.operation, c.method, 'requestBody', 'content', media!, 'schema']);
  if (!validate(value)) return strict.ajv.errorsText(validate.errors).slice(0, 200);
  return undefined;
}

/** A write's answer is what a read returns; the targets a delete removed come back for the next cases. */
async function afterSuccess({ t, upstream, admin, keys, ids }: OracleContext, c: Case, res: Response): Promise<void> {
  const api = as(t, admin.key);
  if (
    c.headers['svc-api-key'] === keys.admin &&
    ['post', 'put', 'patch'].includes(c.method) &&
    (c.operation === '/applications' || c.operation === '/applications/{id}' || c.operation.startsWith('/proxies'))
  ) {
    const base = c.operation.startsWith('/proxies') ? '/proxies' : '/applications';
    const read = await api.get(`${base}/${res.body.id}`);
    if (read.status !== 200) throw new Error(`read back after ${c.method} answered ${read.status}`);
    const { key: _k1, ...written } = res.body;
    const { key: _k2, ...stored } = read.body;
    // Spec 2.4: a proxy's create answer has no modified_at; every other answer of a proxy does.
    if (c.operation === '/proxies') delete stored.modified_at;
    // A configuration is a map: its members come back from jsonb in jsonb's order (shorter names first).
    for (const body of [written, stored])
      if (body.configuration) body.configuration = Object.fromEntries(Object.entries(body.configuration).sort(([a], [b]) => (a < b ? -1 : 1)));
    const differs = [...new Set([...Object.keys(written), ...Object.keys(stored)])].filter((k) => JSON.stringify(written[k]) !== JSON.stringify(stored[k]));
    if (differs.length)
      throw new Error(
        `read back differs from what ${c.method} answered in ${differs.map((k) => `${k}: wrote ${JSON.stringify(written[k])?.slice(0, 120)} read ${JSON.stringify(stored[k])?.slice(0, 120)}`).join('; ')}`,
      );
  }
  if (c.method === 'delete' && res.status === 204) {
    if (c.url.startsWith(`/applications/${ids.application}`)) ids.application = (await createApplication(t, admin.key, TARGET_APPLICATION_BODY)).id;
    if (c.url.startsWith(`/proxies/${ids.proxy}`)) ids.proxy = (await api.post('/proxies', targetProxyBody(upstream.origin)).expect(201)).body.id;
  }
}

/** The smallest request that still fails the same way: query parameters, body members and the key taken out greedily. */
export async function shrink(ctx: OracleContext, c: Case, problem: string): Promise<Case> {
  let best = c;
  const same = async (candidate: Case) => (await check(ctx, candidate)).problem === problem;
  const [path, queryString] = best.url.split(/\?(.*)/s) as [string, string | undefined];
  let params = queryString ? queryString.split('&') : [];
  for (let i = params.length - 1; i >= 0; i--) {
    const fewer = params.filter((_, j) => j !== i);
    const candidate = { ...best, url: fewer.length ? `${path}?${fewer.join('&')}` : path };
    if (await same(candidate)) {
      best = candidate;
      params = fewer;
    }
  }
  const text = best.body;
  if (typeof text === 'string') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const name of Object.keys(value)) {
        const fewer = { ...(value as Json) };
        delete fewer[name];
        const candidate = { ...best, body: JSON.stringify(fewer) };
        // Only bodies JSON.stringify wrote: a raw text (duplicate keys, odd numbers) is kept as it is.
        if (JSON.stringify(JSON.parse(text)) === text && (await same(candidate))) {
          best = candidate;
          value = fewer;
        }
      }
    }
  }
  if (best.headers['svc-api-key'] !== ctx.keys.admin) {
    const candidate = { ...best, headers: { ...best.headers, 'svc-api-key': ctx.keys.admin! } };
    if (await same(candidate)) best = candidate;
  }
  return best;
}
