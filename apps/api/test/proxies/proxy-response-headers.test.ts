import type { OutgoingHttpHeaders } from 'node:http';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { newTenant } from '../support/application-fixtures';

jest.setTimeout(60_000);

/** What a hostile destination answers: an HTML page with every header that acts on a browser's view of an origin. */
const HOSTILE: OutgoingHttpHeaders = {
  'content-type': 'text/html',
  'service-worker-allowed': '/',
  'clear-site-data': '"*"',
  refresh: '0; url=https://attacker.example/',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'alt-svc': 'h2="attacker.example:443"',
  nel: '{"report_to":"a","max_age":31536000,"include_subdomains":true}',
  'report-to': '{"group":"a","max_age":31536000,"endpoints":[{"url":"https://attacker.example/r"}]}',
  'reporting-endpoints': 'a="https://attacker.example/r"',
  'speculation-rules': '"/rules.json"',
  'supports-loading-mode': 'credentialed-prerender',
  'set-login': 'logged-in',
  'x-content-type-options': 'sniff-please',
  'content-security-policy': "script-src 'unsafe-inline'",
  'set-cookie': ['session=fixed; Domain=example.com; Path=/', 'kept=1; Path=/proxy; HttpOnly'],
  link: '<https://attacker.example/x.js>; rel=preload; as=script, <https://api.example/items?page=2>; rel="next", <https://attacker.example/sw.js>; rel="serviceworker"',
  'x-upstream': 'kept',
};
/** What the policy keeps of HOSTILE, some of it rewritten: the rest of its headers must never reach a client. */
const KEPT = ['content-type', 'x-content-type-options', 'content-security-policy', 'set-cookie', 'link', 'x-upstream'];
const DROPPED = Object.keys(HOSTILE).filter((name) => !KEPT.includes(name));
const SANDBOX = "sandbox; default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The policy's marks on a response: nosniff, the sandbox (after any policy of the destination's), none of DROPPED. */
function expectPolicy(headers: Record<string, string | string[] | undefined>): void {
  expect(headers['x-content-type-options']).toBe('nosniff');
  const csp = String(headers['content-security-policy']).split(/,\s*/);
  expect(csp[csp.length - 1]).toBe(SANDBOX);
  for (const name of DROPPED) expect(headers[name]).toBeUndefined();
}

describe('/proxy responses: the header policy (issue 22)', () => {
  let t: TestApp;
  let upstream: Upstream;

  beforeAll(async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, HOSTILE);
      res.end('<script>navigator.serviceWorker.register("/proxy/sw.js", { scope: "/" })</script>');
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1' });
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  async function proxy(body: Record<string, unknown> = {}): Promise<string> {
    const owner = await newTenant(t);
    const res = await t
      .http()
      .post('/proxies')
      .set('svc-api-key', owner.key)
      .send({ name: 'hostile', destination_url: `${upstream.origin}/`, require_auth: false, ...body });
    expect(res.status).toBe(201);
    return res.body.key;
  }

  it("streams a destination's page without its browser-only headers, sandboxed and nosniff", async () => {
    const res = await t
      .http()
      .get('/proxy/page')
      .set('svc-proxy-key', await proxy())
      .expect(200);
    expectPolicy(res.headers);
    // The destination's own policy is kept: a browser enforces both.
    expect(res.headers['content-security-policy']).toContain("script-src 'unsafe-inline'");
    // A host-only cookie stays; one for a whole domain does not.
    expect(res.headers['set-cookie']).toEqual(['kept=1; Path=/proxy; HttpOnly']);
    // Paging links stay; links a browser would fetch or install by itself do not.
    expect(res.headers.link).toBe('<https://api.example/items?page=2>; rel="next"');
    expect(res.headers['x-upstream']).toBe('kept');
    expect(res.headers['content-type']).toBe('text/html');
    expect(res.text).toContain('<script>');
  });

  it("covers a response transform's headers, and its error results", async () => {
    const code = `module.exports = async function (req) {
      return { status: req.args.status, headers: { 'content-type': 'text/html', 'service-worker-allowed': '/', 'clear-site-data': '"storage"', link: '</proxy/a.js>; rel=modulepreload' }, body: '<p>hi</p>' };
    };`;
    const res = await t
      .http()
      .get('/proxy')
      .set('svc-proxy-key', await proxy({ response_transform: { code } }))
      .expect(200);
    expectPolicy(res.headers);
    expect(res.headers.link).toBeUndefined();
    expect(res.text).toBe('<p>hi</p>');

    const failing =
      "module.exports = async () => { throw new CustomHttpResponseError({ status: 409, headers: { 'content-type': 'text/html', 'service-worker-allowed': '/' }, body: '<p>no</p>' }); };";
    const failed = await t
      .http()
      .get('/proxy')
      .set('svc-proxy-key', await proxy({ response_transform: { code: failing } }))
      .expect(409);
    expectPolicy(failed.headers);
    expect(failed.text).toBe('<p>no</p>');
  });

  it("covers the service's own refusals on /proxy", async () => {
    const unknown = await t.http().get('/proxy').set('svc-proxy-key', 'key_unknown').expect(404);
    expectPolicy(unknown.headers);
    expect(unknown.headers['content-security-policy']).toBe(SANDBOX);
    const wrongMethod = await t.http().options('/proxy/x').expect(405);
    expectPolicy(wrongMethod.headers);
  });
});
