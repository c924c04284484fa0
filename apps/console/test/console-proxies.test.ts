import { IncomingMessage } from 'node:http';
import { Page } from 'playwright-core';
import { screenshot, seriousViolations, signIn as pasteKey, WAIT } from './browser';
import { LOOPBACK_ALLOWED, useConsole, useLoopbackServer } from './console.fixture';

// Functions passed to page.evaluate/waitForFunction run in the browser; this program has no DOM types.
declare const window: any;
declare const document: any;

// A browser start and a built service on a loaded 2-core machine: generous bounds, and every wait is on a condition.
jest.setTimeout(240_000);

/** The transform as first typed: line 3 does not parse (`{;`), at column 19. */
const BROKEN = [
  'module.exports = async function (req) {',
  '  const greeting = req.configuration.GREETING;',
  '  const answer = {;',
  '  return { body: { greeting, seen: req.args.body }, headers: req.args.headers };',
  '};',
].join('\n');
const FIXED = BROKEN.replace('const answer = {;', 'const answer = 42;');

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

/** The console's proxies pages in Debian's chromium against the built service and a local upstream. */
describe('console proxies (in chromium)', () => {
  const env = useConsole({ env: LOOPBACK_ALLOWED, reportCsp: true });
  const seen: Seen[] = [];
  // The destination, echoing JSON.
  const upstream = useLoopbackServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ upstream: true, method: req.method, url: req.url, body }));
    });
  }, '/api');

  async function until(condition: () => boolean): Promise<void> {
    const deadline = Date.now() + WAIT;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`not within ${WAIT} ms: ${condition}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const newPage = (path: string) => env.browser.newPage(path);
  const browserErrors = () => env.browser.errors;
  const expectBrowserError = (pattern: RegExp) => env.browser.expectError(pattern);

  async function signIn(page: Page): Promise<void> {
    await pasteKey(page, env.tenant.key);
    await page.getByText('Signed in as').waitFor();
  }

  const api = (method: string, path: string, body?: unknown) => env.api(env.tenant.key, method, path, body);

  /** The request transform's editor, its focusable content (CodeMirror's contenteditable, named by the heading). */
  const requestEditor = (page: Page) => page.getByRole('textbox', { name: 'Request transform' });

  /** Replaces the request transform's code from the keyboard: select all, then the text as one input. */
  async function typeRequestTransform(page: Page, code: string): Promise<void> {
    await requestEditor(page).focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(code);
    await page.waitForFunction(
      (expected: string) =>
        [...document.querySelectorAll('section[aria-labelledby="request_transform-label"] .cm-line')].map((l: any) => l.textContent).join('\n') === expected,
      code,
    );
  }

  it('answers index.html with a fresh style nonce in its CSP and its page, and nothing else inline', async () => {
    const nonces: string[] = [];
    for (const path of ['/console/proxies', '/console/proxies/new']) {
      const res = await fetch(`${env.service.consoleUrl}${path}`);
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      const nonce = /style-src 'self' 'nonce-([A-Za-z0-9+/=]{22,})'/.exec(csp)?.[1];
      expect(nonce).toBeDefined();
      expect(csp).toContain("script-src 'self';");
      expect(csp).not.toContain('unsafe-inline');
      expect(await res.text()).toContain(`<meta name="gatehouse-style-nonce" content="${nonce}" />`);
      nonces.push(nonce!);
    }
    expect(nonces[0]).not.toBe(nonces[1]);
    // The assets carry the policy without a nonce.
    const asset = await fetch(`${env.service.consoleUrl}/console/assets/nothing-here.css`);
    expect(asset.headers.get('content-security-policy')).toContain("style-src 'self';");
  });

  it('creates a proxy whose transform does not compile, shows the error at its line, fixes it, tries, edits and deletes it', async () => {
    const page = await newPage('/console/proxies');
    await signIn(page);
    await page.getByRole('heading', { name: 'Proxies', level: 1 }).waitFor();
    await page.getByTestId('proxies-status').filter({ hasText: 'No proxies yet.' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // A style the page did not stamp with the nonce is refused and reported: the check below can see a violation.
    await page.evaluate(() => {
      const style = document.createElement('style');
      style.id = 'unstamped';
      style.textContent = 'body { color: red; }';
      document.head.appendChild(style);
    });
    await until(() => browserErrors().some((e) => /CSP violation: style-src/.test(e)));
    expectBrowserError(/CSP violation: style-src/);
    expectBrowserError(/inline style violates the following Content Security Policy directive 'style-src/);
    await page.evaluate(() => document.getElementById('unstamped').remove());

    // New proxy, from the keyboard: the link, then the fields.
    await page.getByRole('link', { name: 'New proxy' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New proxy' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/proxies/new');
    await page.getByLabel('Name', { exact: true }).fill('Orders upstream');
    await page.getByLabel('Destination URL').fill(upstream.url);
    await page.getByRole('button', { name: 'Start from a template' }).first().click();
    await typeRequestTransform(page, BROKEN);
    // Tab leaves the editor (it does not trap the keyboard): the next control gets the focus.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('.cm-editor') === null)).toBe(true);

    await page.getByRole('button', { name: 'Add a value' }).click();
    await page.getByLabel('Name 1').fill('GREETING');
    await page.getByLabel('Value 1').fill('hello');

    await page.getByRole('button', { name: 'Create proxy' }).click();
    const message = page.getByTestId('request_transform-error');
    await message.filter({ hasText: 'Line 3, column 19' }).waitFor();
    expect(await message.textContent()).toBe("Line 3, column 19: does not compile: SyntaxError: Unexpected token ';'");
    expectBrowserError(/status of 400/);
    // The diagnostic: CodeMirror marks the range in the editor's third line, and the lint gutter marks that line.
    const marked = await page.evaluate(() => {
      const section = document.querySelector('section[aria-labelledby="request_transform-label"]');
      const lines = [...section.querySelectorAll('.cm-content .cm-line')];
      const range = section.querySelector('.cm-lintRange-error');
      const marker = section.querySelector('.cm-lint-marker-error');
      const numbers = [...section.querySelectorAll('.cm-lineNumbers .cm-gutterElement')].filter((g: any) => g.textContent !== '');
      const markerTop = marker?.closest('.cm-gutterElement')?.getBoundingClientRect().top;
      const numberAtMarker = numbers.find((g: any) => Math.abs(g.getBoundingClientRect().top - markerTop) < 2)?.textContent;
      return { line: lines.findIndex((l: any) => l.contains(range)) + 1, text: range?.textContent, numberAtMarker };
    });
    expect(marked).toEqual({ line: 3, text: ';', numberAtMarker: '3' });
    // The editor's styles came through the nonce: CodeMirror's <style> is stamped, and its rules apply.
    expect(await page.evaluate(() => window.getComputedStyle(document.querySelector('.cm-editor')).display)).toBe('flex');
    const styles = await page.evaluate(() => [...document.querySelectorAll('style')].map((s: any) => s.nonce));
    expect(styles.length).toBeGreaterThan(0);
    expect(styles.every((nonce: string) => nonce.length >= 22)).toBe(true);
    // Nothing was created.
    expect((await api('GET', '/proxies')).json.data).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'proxy-editor');

    // Fixed and saved: the page becomes the proxy's, with its key.
    await typeRequestTransform(page, FIXED);
    await page.getByRole('button', { name: 'Create proxy' }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('proxy-status').filter({ hasText: 'Created.' }).waitFor();
    await page.waitForURL(/\/console\/proxies\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    expect(await message.textContent()).toBe('');
    expect(await page.locator('.cm-lintRange-error').count()).toBe(0);
    const created = (await api('GET', `/proxies/${id}`)).json;
    expect(created).toMatchObject({ name: 'Orders upstream', destination_url: upstream.url, require_auth: true, configuration: { GREETING: 'hello' } });
    expect(created.request_transform.code).toBe(FIXED);
    expect(created.response_transform).toBeUndefined();
    expect(await page.getByLabel('Proxy key (SVC-PROXY-KEY)').inputValue()).toBe(created.key);

    // Try it: through the transform to the upstream, with the proxy key and the signed-in key (require_auth).
    await page.getByLabel('Path after /proxy/').fill('orders/42');
    await page.getByLabel('Query string').fill('expand=items');
    await page.getByLabel('Method').selectOption('POST');
    await page.getByLabel('Body').fill('{"amount": 5}');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByTestId('try-status').filter({ hasText: '200' }).waitFor();
    const answered = JSON.parse((await page.getByTestId('try-body').textContent())!);
    // The request transform ran: the upstream got its body (the configuration's greeting, the body sent).
    expect(answered).toEqual({ upstream: true, method: 'POST', url: '/api/orders/42?expand=items', body: expect.any(String) });
    expect(JSON.parse(answered.body)).toEqual({ greeting: 'hello', seen: { amount: 5 } });
    const last = seen[seen.length - 1]!;
    expect(last.headers['svc-api-key']).toBeUndefined();
    expect(last.headers['svc-proxy-key']).toBeUndefined();
    await page.getByText('Headers (').click();
    await page.locator('.try-result dt', { hasText: 'svc-proxy-destination-status' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('heading', { name: 'Try the proxy' }).scrollIntoViewIfNeeded();
    await screenshot(page, 'proxy-try');

    // The application field suggests the tenant's public and private applications (this key may read them).
    const svcApp = await api('POST', '/applications', { name: 'Orders svc', type: 'private', permissions: ['token:read'] });
    expect(svcApp.status).toBe(201);
    await page.reload();
    await page.getByRole('heading', { name: 'Proxy Orders upstream' }).waitFor();
    const option = page.locator(`#proxy-application-options option[value="${svcApp.json.id}"]`);
    await option.waitFor({ state: 'attached' });
    expect(await option.getAttribute('label')).toBe('Orders svc (private)');
    expect(await page.getByLabel('Application id (optional)').getAttribute('list')).toBe('proxy-application-options');
    await page.getByLabel('Application id (optional)').fill(svcApp.json.id);
    // Edit: a rate limit set through the API survives the console's save (a merge patch), the removed member goes.
    expect((await api('PATCH', `/proxies/${id}`, { rate_limit: { limit: 50, window_seconds: 60 } })).status).toBe(200);
    await page.getByLabel('Name', { exact: true }).fill('Orders upstream v2');
    await page.getByRole('button', { name: 'Remove GREETING' }).click();
    // A member named like an Object.prototype property is a member like any other (CONTRACT section 6).
    await page.getByRole('button', { name: 'Add a value' }).click();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Name 1');
    await page.keyboard.type('__proto__');
    await page.getByLabel('Value 1').fill('kept');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('proxy-status').filter({ hasText: 'Saved.' }).waitFor();
    const edited = (await api('GET', `/proxies/${id}`)).json;
    expect(edited).toMatchObject({
      name: 'Orders upstream v2',
      rate_limit: { limit: 50, window_seconds: 60 },
      request_transform: { code: FIXED },
      application_id: svcApp.json.id,
    });
    expect(Object.entries(edited.configuration)).toEqual([['__proto__', 'kept']]);

    // The rate limit: the form shows the one set through the API; a value the API refuses is shown at its field and
    // nothing changes; a valid one is saved; both fields emptied remove it.
    expect(await page.getByLabel('Requests').inputValue()).toBe('50');
    expect(await page.getByLabel('Per window of (seconds)').inputValue()).toBe('60');
    await page.getByLabel('Requests').fill('0');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const limitError = page.locator('#proxy-rate-limit-limit-error');
    await limitError.waitFor();
    expect(await limitError.textContent()).toMatch(/1/);
    expect(await page.getByLabel('Requests').getAttribute('aria-invalid')).toBe('true');
    expectBrowserError(/status of 400/);
    expect((await api('GET', `/proxies/${id}`)).json.rate_limit).toEqual({ limit: 50, window_seconds: 60 });
    await page.getByLabel('Requests').fill('20');
    await page.getByLabel('Per window of (seconds)').fill('10');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('proxy-status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await api('GET', `/proxies/${id}`)).json.rate_limit).toEqual({ limit: 20, window_seconds: 10 });
    expect(await limitError.count()).toBe(0);
    await page.getByLabel('Requests').fill('');
    await page.getByLabel('Per window of (seconds)').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    // 'Saved.' is on the page from the save before, so wait for the API to have it rather than for the status.
    for (let i = 0; (await api('GET', `/proxies/${id}`)).json.rate_limit !== undefined; i++) {
      if (i > WAIT / 50) throw new Error('the rate limit was not removed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await page.getByTestId('proxy-status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // The list shows it, a link to its page.
    await page.getByRole('link', { name: 'Proxies' }).first().click();
    await page.getByRole('link', { name: 'Orders upstream v2' }).waitFor();
    await page.getByTestId('proxies-status').filter({ hasText: 'Page 1 of 1 (1 proxies)' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'proxies');

    // Delete, with a confirmation: Escape keeps the proxy, Delete removes it.
    await page.getByRole('link', { name: 'Orders upstream v2' }).click();
    await page.getByRole('button', { name: 'Delete proxy' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the proxy Orders upstream v2?' });
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await api('GET', `/proxies/${id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete proxy' }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByTestId('proxies-status').filter({ hasText: 'No proxies yet.' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/proxies');
    expect((await api('GET', `/proxies/${id}`)).status).toBe(404);
    await page.close();
  });

  it('says so for a proxy that does not exist', async () => {
    const page = await newPage('/console/proxies/00000000-0000-4000-8000-000000000000');
    await signIn(page);
    await page.getByRole('heading', { name: 'Proxy not found' }).waitFor();
    expectBrowserError(/status of 404/);
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it('wrote no browser console errors and no CSP violations', () => {
    expect(browserErrors()).toEqual([]);
  });
});
