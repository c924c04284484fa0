import { IncomingMessage } from 'node:http';
import { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { seriousViolations, signIn, WAIT } from './browser';
import { LOOPBACK_ALLOWED, useConsole, useLoopbackServer } from './console.fixture';

// Functions passed to page.evaluate run in the browser; this program has no DOM types.
declare const window: any;

jest.setTimeout(240_000);

interface Delivery {
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * The console's log streams page in Debian's chromium against the built service (its jobs, stream delivery among
 * them, run in the process: no Redis given) and a local receiver of the https kind on loopback (allowed below, as the
 * proxies tests allow their upstream). The receiver keeps every delivery; the test verifies their Standard Webhooks
 * signatures with the secret the page showed once.
 */
describe('console log streams (in chromium)', () => {
  const env = useConsole({ env: { ...LOOPBACK_ALLOWED, LOG_STREAM_INTERVAL_MS: '200' } });
  const deliveries: Delivery[] = [];
  const receiver = useLoopbackServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  }, '/hook');

  const api = (method: string, path: string, body?: unknown) => env.api(env.tenant.key, method, path, body);

  async function until<T>(probe: () => T | Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    const deadline = Date.now() + WAIT;
    for (;;) {
      const value = await probe();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`not within ${WAIT} ms: ${what}; last: ${JSON.stringify(value)?.slice(0, 300)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const row = (page: Page, name: string) => page.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });

  it('creates an https stream (a 400 at its field first), shows its secret once, its deliveries and state; pauses, resumes and deletes it', async () => {
    const page = await env.browser.newPage('/console/streams');
    await signIn(page, env.tenant.key);
    await page.getByRole('heading', { name: 'Log streams', level: 1 }).waitFor();
    await expect(page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Log streams' }).getAttribute('aria-current')).resolves.toBe(
      'page',
    );
    await page.getByTestId('streams-status').filter({ hasText: 'No log streams yet.' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // The form: an https stream whose URL the API refuses, its message at the URL field and nothing created.
    await page.getByRole('link', { name: 'New log stream' }).click();
    await page.getByRole('heading', { name: 'New log stream', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('siem');
    // Each kind shows its own settings; a secret is a write-only password field.
    await page.getByLabel('Kind').selectOption('splunk_hec');
    await expect(page.getByLabel('HEC token').getAttribute('type')).resolves.toBe('password');
    await page.getByLabel('Kind').selectOption('https');
    const url = page.getByLabel('Endpoint URL');
    await url.fill('ftp://127.0.0.1/hook');
    await url.press('Enter');
    await page.getByTestId('form-problem').waitFor();
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    const urlError = page.locator('#stream-https-url-error');
    expect(await urlError.textContent()).toMatch(/URL/);
    expect(await url.getAttribute('aria-describedby')).toContain('stream-https-url-error');
    expect(await page.getByTestId('form-problem').textContent()).toContain('See the field marked below');
    env.browser.expectError(/status of 400/);
    expect((await api('GET', '/logs/streams')).json.data).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);

    // Fixed and sent with Enter: back on the list, the signing secret shown once in its copy box.
    await url.fill(receiver.url);
    await url.press('Enter');
    await page.getByRole('heading', { name: 'The signing secret of siem' }).waitFor();
    expect(page.url()).toBe(`${env.service.consoleUrl}/console/streams`);
    const secret = await page.getByLabel('Signing secret (Standard Webhooks)').inputValue();
    expect(secret).toMatch(/^whsec_/);
    const stored = await page.evaluate(
      () => JSON.stringify({ ...window.sessionStorage }) + JSON.stringify({ ...window.localStorage }) + window.document.cookie,
    );
    expect(stored).not.toContain(secret.slice(6));
    expect(page.url()).not.toContain(secret.slice(6));
    const listed = await api('GET', '/logs/streams');
    expect(listed.json.data).toHaveLength(1);
    expect(JSON.stringify(listed.json)).not.toContain(secret.slice(6));
    const id: string = listed.json.data[0].id;

    const siem = row(page, 'siem');
    await siem.getByText('https', { exact: true }).waitFor();
    await siem.getByText(receiver.url).waitFor();
    expect(await siem.getByTestId('stream-state').textContent()).toBe('active');
    expect(await seriousViolations(page)).toEqual([]);

    // A log written after the stream: delivered to the receiver, signed with the secret shown, and the row says so.
    expect((await api('POST', '/applications', { name: 'streamed', type: 'private', permissions: ['token:read'] })).status).toBe(201);
    await until(
      () => deliveries.length,
      (n) => n > 0,
      'a delivery',
    );
    for (const delivery of deliveries) new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    const records = deliveries.flatMap((d) => (JSON.parse(d.body) as { data: { records: Array<{ position: number; hash: string }> } }).data.records);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => Number.isInteger(r.position) && typeof r.hash === 'string')).toBe(true);
    await until(
      () => api('GET', `/logs/streams/${id}`),
      (r) => r.json.lag.logs === 0 && r.json.last_synced_at !== null,
      'caught up',
    );
    // The page reads the list again every 3 s; later logs (the stream's own audit records) may move the position on.
    await siem
      .getByTestId('stream-lag')
      .filter({ hasText: /^caught up \(position [1-9]\d*\)$/ })
      .waitFor();
    // A stream that starts at the head shows "caught up" before its first delivery: the last sync follows on a later read.
    const lastSync = siem.getByRole('cell').nth(5);
    for (let i = 0; i < 60 && (await lastSync.textContent()) === 'never'; i++) await page.waitForTimeout(500);
    expect(await lastSync.textContent()).not.toBe('never');

    // Reloading forgets the secret for good.
    await page.reload();
    await row(page, 'siem').waitFor();
    expect(await page.getByText('The signing secret of siem').count()).toBe(0);

    // Pause: the state shown, the API agrees; resume.
    await page.getByRole('button', { name: 'Pause siem' }).click();
    await page.getByText('Log stream “siem” paused.').waitFor();
    await row(page, 'siem').getByTestId('stream-state').filter({ hasText: 'paused' }).waitFor();
    expect((await api('GET', `/logs/streams/${id}`)).json.state).toBe('paused');
    await page.getByRole('button', { name: 'Resume siem' }).click();
    await row(page, 'siem').getByTestId('stream-state').filter({ hasText: 'active' }).waitFor();
    expect((await api('GET', `/logs/streams/${id}`)).json.state).toBe('active');

    // Delete: Escape keeps it, Cancel focused; then confirmed, it is gone.
    await page.getByRole('button', { name: 'Delete siem' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the log stream siem?' });
    await dialog.waitFor();
    expect(await dialog.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === b.ownerDocument.activeElement)).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await api('GET', `/logs/streams/${id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete siem' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Log stream “siem” deleted: nothing more is sent to it.').waitFor();
    await page.getByTestId('streams-status').filter({ hasText: 'No log streams yet.' }).waitFor();
    expect((await api('GET', `/logs/streams/${id}`)).status).toBe(404);
    expect(env.browser.errors).toEqual([]);
  });

  it('shows no Log streams entry to a key without log:stream', async () => {
    const created = await api('POST', '/applications', { name: 'reader', type: 'management', permissions: ['log:read'] });
    expect(created.status).toBe(201);
    const page = await env.browser.newPage('/console/streams');
    await signIn(page, created.json.key);
    await page.getByText('This key may not see log streams: it lacks log:stream.').waitFor();
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Log streams' }).count()).toBe(0);
    expect(env.browser.errors.filter((e) => !/status of 403/.test(e))).toEqual([]);
  });
});
