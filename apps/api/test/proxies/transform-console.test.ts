import { captureLog } from '@gatehouse/test-support/log-capture';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, newTenant } from '../support/application-fixtures';

jest.setTimeout(30_000);

const CONFIG_SECRET = 'cfg-secret-91d3aa7e';
const AUTHORIZATION = 'Bearer tok-5b2e77c1';
const CARD = '4000056655665556';

// A transform that prints everything a tenant would not want an operator to read.
const CHATTY = `module.exports = async (req) => {
  console.log('card', req.args.body.card, 'auth', req.args.headers.authorization, 'config', req.configuration.secret);
  console.error(JSON.stringify(req));
  return { body: req.args.body, headers: {} };
};`;

/** A transform's console output is the tenant's data: it reaches the service log only when an operator says so. */
describe("transforms' console output and the service log", () => {
  let upstream: Upstream;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => res.end('{}'));
    });
  });
  afterAll(() => upstream?.stop());

  async function invokeChatty(env: Record<string, string>, level: string): Promise<string> {
    const log = captureLog(level);
    const t = await startTestApp(
      { PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1', LOG_LEVEL: level, ...env },
      { logger: log.nest, accessLog: log.root },
    );
    try {
      const admin = await newTenant(t);
      const created = await as(t, admin.key).post('/proxies', {
        name: 'chatty',
        destination_url: upstream.origin,
        require_auth: false,
        configuration: { secret: CONFIG_SECRET },
        request_transform: { code: CHATTY },
      });
      expect(created.status).toBe(201);
      const res = await t.http().post('/proxy').set('svc-proxy-key', created.body.key).set('authorization', AUTHORIZATION).send({ card: CARD });
      expect(res.status).toBe(200);
      // The access line is written when the response closes: wait for it, so everything of the request is in.
      for (let i = 0; i < 100 && !log.lines().some((l) => l.kind === 'access' && l.route === '/proxy'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return log.text();
    } finally {
      await t.close();
    }
  }

  it.each(['trace', 'debug', 'info'])('by default, prints nothing of it at LOG_LEVEL=%s', async (level) => {
    const text = await invokeChatty({}, level);
    expect(text).toContain('"route":"/proxy"');
    for (const secret of [CONFIG_SECRET, AUTHORIZATION, CARD]) expect(text).not.toContain(secret);
  });

  it('with TRANSFORM_CONSOLE_LOG=true, logs it (bounded, see transform-console.spec.ts)', async () => {
    const text = await invokeChatty({ TRANSFORM_CONSOLE_LOG: 'true' }, 'info');
    expect(text).toContain('request transform of proxy');
    expect(text).toContain(CONFIG_SECRET);
  });
});
