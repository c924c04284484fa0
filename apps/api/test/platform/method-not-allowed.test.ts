import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { Caller, newTenant } from '../support/application-fixtures';
import { Json, openApiDocument } from '../support/openapi-document';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];
const DOCUMENTED = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Whether a concrete path is one the template (`/applications/{id}`) describes: `{x}` is any one segment. */
function describes(template: string, path: string): boolean {
  const a = template.split('/');
  const b = path.split('/');
  return a.length === b.length && a.every((segment, i) => /^\{[^}]+\}$/.test(segment) || segment === b[i]);
}

/**
 * Every path of the OpenAPI document, asked with every method it does not list: a 405 ProblemDetails whose `Allow`
 * names what the path takes (HEAD wherever GET is), before the body is read or the caller authenticated. A path two
 * templates describe (`/applications/key` and `/applications/{id}`) takes what either takes.
 */
describe('a method a known path does not take is a 405 with Allow', () => {
  const document = openApiDocument();
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => {
    t = await startTestApp();
    admin = await newTenant(t);
  }, 60_000);
  afterAll(() => t?.close());

  /** The methods the document gives every template describing `path`, as an Allow header would list them. */
  function allowedOn(path: string): string[] {
    const allowed = new Set<string>();
    for (const [template, item] of Object.entries<Json>(document.paths)) {
      if (!describes(template, path)) continue;
      for (const method of DOCUMENTED) if (item[method]) allowed.add(method.toUpperCase());
    }
    if (allowed.has('GET')) allowed.add('HEAD');
    return [...allowed].sort();
  }

  const paths = Object.keys(document.paths).filter((p) => p !== '/proxy' && !p.startsWith('/proxy/'));

  it('covers every path of the document (the data plane, /proxy, takes any method and answers its own 405)', () => {
    expect(paths.length).toBeGreaterThan(10);
    expect(paths).toEqual(expect.arrayContaining(['/applications', '/applications/{id}', '/proxies/{id}', '/logs']));
  });

  it.each(paths)('%s', async (template) => {
    const path = template.replace(/\{[^}]+\}/g, () => randomUUID());
    const allowed = allowedOn(path);
    const refused = METHODS.filter((m) => !allowed.includes(m));
    expect(refused.length).toBeGreaterThan(0);
    for (const method of refused) {
      const req = (t.http() as unknown as Record<string, (url: string) => import('supertest').Test>)[method.toLowerCase()]!(path).set('SVC-API-KEY', admin.key);
      const res = method === 'HEAD' || method === 'GET' ? await req : await req.set('Content-Type', 'application/json').send('{"not": "read"}');
      const where = `${method} ${path}`;
      expect({ where, status: res.status }).toEqual({ where, status: 405 });
      expect({ where, allow: res.headers.allow }).toEqual({ where, allow: allowed.join(', ') });
      if (method === 'HEAD') continue;
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        status: 405,
        title: 'Method Not Allowed',
        detail: `${method} is not allowed on this path; it allows ${allowed.join(', ')}`,
      });
    }
  });

  it('PATCH on an application is a 405 before its body is read or its caller authenticated', async () => {
    const id = randomUUID();
    for (const key of [admin.key, undefined, 'key_wrong']) {
      const req = t.http().patch(`/applications/${id}`).set('Content-Type', 'application/merge-patch+json');
      const res = await (key ? req.set('SVC-API-KEY', key) : req).send('{not json');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('DELETE, GET, HEAD, PUT');
    }
  });

  it('an unknown path is still a 404, and a method a path takes is not touched', async () => {
    expect((await t.http().get('/nope').set('SVC-API-KEY', admin.key)).status).toBe(404);
    expect((await t.http().delete('/applications/key/extra').set('SVC-API-KEY', admin.key)).status).toBe(404);
    expect((await t.http().get('/applications').set('SVC-API-KEY', admin.key)).status).toBe(200);
    expect((await t.http().head('/applications').set('SVC-API-KEY', admin.key)).status).toBe(200);
  });
});
