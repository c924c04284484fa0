import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { FinishedRequest, requestObserver } from './access-log';
import { API_ORIGIN_PLACEHOLDER, mountConsole, STYLE_NONCE_PLACEHOLDER } from './console';
import { consoleListener, Origins } from './console-origin';

/** The console as the access log and the metrics see it: two route labels, whatever the path. */
describe('console routes', () => {
  let dir: string;
  let finished: FinishedRequest[];
  let app: express.Express;
  /** The console's listener in front of the same application. */
  let consoleSide: ReturnType<typeof consoleListener>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(
      join(dir, 'index.html'),
      `<meta name="style-nonce" content="${STYLE_NONCE_PLACEHOLDER}"><meta name="api" content="${API_ORIGIN_PLACEHOLDER}">`,
    );
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    finished = [];
    app = express();
    app.use(requestObserver([(f) => finished.push(f)]));
    mountConsole(app as unknown as NestExpressApplication, new Origins({ port: 3000, consolePort: 3001 }), dir);
    consoleSide = consoleListener(app);
  });

  /** The route of the one request observed (reported when its response closes, just after the client has it). */
  async function routeOf(path: string, status: number): Promise<string> {
    await request(consoleSide).get(path).expect(status);
    for (let i = 0; i < 50 && finished.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(finished).toHaveLength(1);
    return finished[0].route;
  }

  it('labels every page (deep links included) /console/*', async () => {
    expect(await routeOf('/console', 200)).toBe('/console/*');
    finished = [];
    expect(await routeOf('/console/logs?entity_type=card', 200)).toBe('/console/*');
  });

  it('labels assets, found or not, /console/assets/*', async () => {
    expect(await routeOf('/console/assets/index-abc123.js', 200)).toBe('/console/assets/*');
    finished = [];
    expect(await routeOf('/console/assets/missing-0000.js', 404)).toBe('/console/assets/*');
  });

  it('leaves paths outside the console unmatched', async () => {
    expect(await routeOf('/nowhere', 404)).toBe('unmatched');
  });
});

describe("the console's origin", () => {
  let app: express.Express;
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-console-'));
    writeFileSync(join(dir, 'index.html'), `<meta name="api" content="${API_ORIGIN_PLACEHOLDER}">`);
    app = express();
    mountConsole(app as unknown as NestExpressApplication, new Origins({ port: 3000, consolePort: 3001 }), dir);
    app.get('/applications', (_req, res) => res.json([]));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is not the API's: /console there redirects to the same page on the console's port", async () => {
    const res = await request(app).get('/console/logs?entity_type=card').set('host', 'gh.internal:3000').expect(302);
    expect(res.headers.location).toBe('http://gh.internal:3001/console/logs?entity_type=card');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('serves the console there, with the API origin it may call (and only that one) in its page and its CSP', async () => {
    const res = await request(consoleListener(app)).get('/console/').set('host', 'gh.internal:3001').expect(200);
    expect(res.text).toBe('<meta name="api" content="http://gh.internal:3000">');
    expect(res.headers['content-security-policy']).toContain("connect-src 'self' http://gh.internal:3000;");
    expect(res.headers['content-security-policy']).toContain("script-src 'self';");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sandboxes every other answer of the console listener, and sends / to the console', async () => {
    const other = await request(consoleListener(app)).get('/applications').expect(200);
    expect(other.headers['content-security-policy']).toMatch(/^sandbox; default-src 'none'/);
    expect(other.headers['x-content-type-options']).toBe('nosniff');
    const root = await request(consoleListener(app)).get('/').expect(302);
    expect(root.headers.location).toBe('/console/');
  });

  it('answers a host name that is not one with no origin at all', async () => {
    const res = await request(consoleListener(app)).get('/console/').set('host', 'a"b').expect(200);
    expect(res.text).toBe('<meta name="api" content="">');
    expect(res.headers['content-security-policy']).toContain("connect-src 'self';");
  });

  it('goes to the configured public origins when deployments name them', async () => {
    const named = express();
    const origins = new Origins({ port: 3000, consolePort: 3001, consolePublicUrl: 'https://console.example.com', apiPublicUrl: 'https://api.example.com' });
    mountConsole(named as unknown as NestExpressApplication, origins, dir);
    const moved = await request(named).get('/console/proxies').set('host', 'internal:3000').expect(302);
    expect(moved.headers.location).toBe('https://console.example.com/console/proxies');
    const page = await request(consoleListener(named)).get('/console/').set('host', 'console.example.com').expect(200);
    expect(page.text).toBe('<meta name="api" content="https://api.example.com">');
    expect(page.headers['content-security-policy']).toContain("connect-src 'self' https://api.example.com;");
  });

  it("with the console off, /console is a 404 on the API's port", async () => {
    const off = express();
    mountConsole(off as unknown as NestExpressApplication, new Origins({ port: 3000 }), dir);
    await request(off).get('/console/').expect(404);
  });
});
