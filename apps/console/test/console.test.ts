import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { CreatedTenant, Log, LogRepository } from '@gatehouse/domain';
import { REPO_ROOT, ServiceProcess, startServiceProcess } from '../../../test/support/service-process';
import { startTestApp } from '../../../test/support/test-app';
import { TEST_DATABASE_URL, TEST_LOG_SIGNING_KEY } from '../../../test/support/test-env';

// Functions passed to page.evaluate/waitForFunction run in the browser; this program has no DOM types.
declare const window: any;
declare const document: any;

// A browser start and a built service on a loaded 2-core machine: generous bounds, and every wait is on a condition.
jest.setTimeout(180_000);
const WAIT = 45_000;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = join(REPO_ROOT, 'tmp', 'console-screenshots');
const TIME_ZONE = 'Europe/Berlin';
const SEEDED = 130;
const BASE = Date.UTC(2026, 2, 1);

/** Seeded logs, one a minute: cards and tokens alternating, entity ids e0..e4. */
function seedLogs(tenantId: string): Log[] {
  return Array.from({ length: SEEDED }, (_, i) => ({
    id: randomUUID(),
    tenantId,
    actorId: i % 2 === 0 ? randomUUID() : null,
    actorType: i % 2 === 0 ? ('application' as const) : ('system' as const),
    entityType: i % 2 === 0 ? 'card' : 'token',
    entityId: `e${i % 5}`,
    operation: 'update' as const,
    message: `Seeded change ${i}`,
    createdAt: new Date(BASE + i * 60_000),
  }));
}

/** The console in Debian's chromium against the built service (`npm run build` puts the console in dist/console). */
describe('console (in chromium)', () => {
  let service: ServiceProcess;
  let browser: Browser;
  let context: BrowserContext;
  let tenant: CreatedTenant;
  let logs: Log[];
  /** Every console error and uncaught page error: a CSP violation shows up here too. */
  const browserErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
    if (!existsSync(join(REPO_ROOT, 'dist/console/index.html'))) throw new Error('dist/console is missing: run `npm run build` first');
    const admin = await startTestApp();
    try {
      tenant = await admin.tenant();
      logs = seedLogs(tenant.tenant.id);
      await admin.app.get(LogRepository).append(logs);
    } finally {
      await admin.close();
    }
    service = await startServiceProcess({
      DATABASE_URL: TEST_DATABASE_URL,
      LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY,
      // Checkpoints every second (the least allowed), so the integrity panel has one to show soon.
      LOG_CHECKPOINT_INTERVAL_MS: '1000',
      REACTOR_POOL_SIZE: '1',
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      timeout: WAIT,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: TIME_ZONE, locale: 'en-GB' });
    context.setDefaultTimeout(WAIT);
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  function watch(page: Page): void {
    page.on('console', (message) => {
      if (message.type() === 'error') browserErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => browserErrors.push(`${page.url()}: ${error.message}`));
  }

  async function newPage(path: string): Promise<Page> {
    const page = await context.newPage();
    watch(page);
    await page.goto(`${service.baseUrl}${path}`);
    return page;
  }

  const rowCount = (page: Page) => page.locator('tbody tr').count();
  const status = (page: Page) => page.getByTestId('logs-status');

  /** Scrolls to the end of the table until the listing says it has reached the end; the rows shown. */
  async function scrollToEnd(page: Page): Promise<number> {
    const deadline = Date.now() + WAIT;
    while (!/the end of the list|No logs match/.test((await status(page).textContent()) ?? '')) {
      if (Date.now() > deadline) throw new Error(`the listing never reached its end: ${await status(page).textContent()}`);
      await page.locator('.sentinel').scrollIntoViewIfNeeded();
      await page.waitForFunction(() => !/Loading/.test(document.querySelector('[data-testid=logs-status]')?.textContent ?? ''));
    }
    return rowCount(page);
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.getByLabel('API key').fill(key);
    await page.keyboard.press('Enter');
  }

  async function seriousViolations(page: Page): Promise<string[]> {
    // Evaluated over the DevTools protocol, which the page's CSP does not govern: the console's own CSP stays on.
    await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
    const result = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: (ctx: unknown, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: unknown[] }> }> } }).axe;
      return axe.run(document, { resultTypes: ['violations'] });
    });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
  }

  it('is served at /console with a strict Content-Security-Policy, and deep links open the page', async () => {
    for (const path of ['/console/', '/console/logs?entity_type=card']) {
      const res = await fetch(`${service.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(await res.text()).toContain('<div id="root"></div>');
    }
    expect((await fetch(`${service.baseUrl}/console/assets/nothing-here.js`)).status).toBe(404);
  });

  it('refuses a wrong key, signs in with the keyboard, keeps the key in sessionStorage only, and signs out', async () => {
    const page = await newPage('/console/');
    await signIn(page, 'key_not-a-real-key-at-all-0000000000');
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
    // The refused key's 401 is the one browser error this test expects.
    const refused = browserErrors.findIndex((e) => /status of 401/.test(e));
    expect(refused).toBeGreaterThanOrEqual(0);
    browserErrors.splice(refused, 1);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'sign-in.png') });

    await signIn(page, tenant.key);
    await page.getByText('Signed in as').waitFor();
    expect(await page.evaluate(() => window.sessionStorage.getItem('gatehouse.console.key'))).toBe(tenant.key);
    expect(await page.evaluate(() => window.localStorage.length)).toBe(0);
    expect(await context.cookies()).toEqual([]);

    // A reload keeps the session (sessionStorage); signing out forgets the key and shows the sign-in form again.
    await page.reload();
    await page.getByText('Signed in as').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);
    await page.reload();
    await page.getByLabel('API key').waitFor();
    expect(await page.getByText('Signed in as').count()).toBe(0);
    await page.close();
  });

  it('lists the logs newest first, loads more as it scrolls, filters through the form into the URL, and shows one log', async () => {
    const page = await newPage('/console/');
    await signIn(page, tenant.key);
    await page.getByRole('heading', { name: 'Audit logs' }).waitFor();
    // The dates are shown in the browser's time zone, and the filters say which it is.
    await page.getByLabel(`From (${TIME_ZONE})`).waitFor();

    // The seeded logs (and the tenant's own creation logs, newer): newest first, 50 at a time.
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length >= 50);
    expect(await rowCount(page)).toBe(50);
    const all = await scrollToEnd(page);
    expect(all).toBeGreaterThanOrEqual(SEEDED);
    const messages = await page.locator('tbody tr td:last-child').allTextContents();
    const seededOrder = messages.filter((m) => m.startsWith('Seeded change'));
    expect(seededOrder).toEqual([...logs].reverse().map((l) => l.message));
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'logs.png') });

    // Filters through the form: entity type from /logs/entity-types, entity id; the URL carries them.
    await page.getByLabel('Entity type').selectOption('card');
    await page.getByLabel('Entity id').fill('e2');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/entity_type=card/);
    expect(new URL(page.url()).searchParams.get('entity_id')).toBe('e2');
    const cardsE2 = logs.filter((l) => l.entityType === 'card' && l.entityId === 'e2').reverse();
    expect(await scrollToEnd(page)).toBe(cardsE2.length);
    expect(await page.locator('tbody tr td:last-child').allTextContents()).toEqual(cardsE2.map((l) => l.message));

    // The detail panel of one log, with its chain position and hash.
    await page.locator('tbody tr').first().getByRole('button').click();
    const detail = page.getByRole('complementary');
    await detail.getByText(cardsE2[0]!.id).waitFor();
    await detail.getByText('Chain hash').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'logs-detail.png') });

    // Back goes to the unfiltered list.
    await page.goBack();
    await page.waitForFunction(() => !window.location.search.includes('entity_type'));
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length >= 50);
    await page.close();
  });

  it('opens a deep link with a date range and an actor, and shows the range in local time', async () => {
    const from = logs[20]!.createdAt.toISOString();
    const until = logs[40]!.createdAt.toISOString();
    const page = await newPage(`/console/logs?start_date=${from}&end_date=${until}`);
    await signIn(page, tenant.key);
    await page.getByRole('heading', { name: 'Audit logs' }).waitFor();
    expect(await scrollToEnd(page)).toBe(20);
    expect(await page.locator('tbody tr td:last-child').allTextContents()).toEqual(logs.slice(20, 40).reverse().map((l) => l.message));
    // 2026-03-01T00:20Z is 01:20 in Berlin (UTC+1 in March before the switch).
    expect(await page.getByLabel(`From (${TIME_ZONE})`).inputValue()).toBe('2026-03-01T01:20');

    const actor = logs[10]!.actorId!;
    await page.goto(`${service.baseUrl}/console/logs?actor_id=${actor}`);
    expect(await scrollToEnd(page)).toBe(1);
    expect(await page.locator('tbody tr td:last-child').allTextContents()).toEqual([logs[10]!.message]);

    // A bad filter is the API's 400, said in the page, not a crash.
    await page.goto(`${service.baseUrl}/console/logs?actor_id=not-a-uuid`);
    await page.getByRole('alert').waitFor();
    const badRequest = browserErrors.findIndex((e) => /status of 400/.test(e));
    expect(badRequest).toBeGreaterThanOrEqual(0);
    browserErrors.splice(badRequest, 1);
    await page.close();
  });

  it('exports the current filter as NDJSON and CSV, and verifies the trail against the signed checkpoints', async () => {
    // The service signs the seeded chain within a few intervals; wait on that, however slow the machine.
    const deadline = Date.now() + WAIT;
    for (;;) {
      const res = await fetch(`${service.baseUrl}/logs/checkpoints?size=1`, { headers: { 'svc-api-key': tenant.key } });
      const body = (await res.json()) as { data?: Array<{ position: number }> };
      if ((body.data?.[0]?.position ?? 0) >= SEEDED) break;
      if (Date.now() > deadline) throw new Error(`no checkpoint covering the seeded logs: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const page = await newPage('/console/logs?entity_type=card&entity_id=e2');
    await signIn(page, tenant.key);
    await page.getByTestId('last-checkpoint').filter({ hasText: 'Last signed checkpoint: position' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length > 0);
    // The export is in chain order (position ascending): the seeded order.
    const cardsE2 = logs.filter((l) => l.entityType === 'card' && l.entityId === 'e2');

    const [ndjson] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'NDJSON' }).click()]);
    expect(ndjson.suggestedFilename()).toMatch(/^gatehouse-logs-.*\.ndjson$/);
    const exported = readFileSync(await ndjson.path(), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(exported.map((l: { id: string }) => l.id)).toEqual(cardsE2.map((l) => l.id));
    expect(exported.every((l: { hash: string }) => /^[0-9a-f]{64}$/.test(l.hash))).toBe(true);

    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'CSV' }).click()]);
    expect(csv.suggestedFilename()).toMatch(/\.csv$/);
    const rows = readFileSync(await csv.path(), 'utf8').trim().split(/\r?\n/);
    expect(rows).toHaveLength(cardsE2.length + 1);
    expect(rows[1]).toContain(cardsE2[0]!.id);

    // The whole trail recomputed in the browser (SHA-256 chain, Ed25519 checkpoint signatures).
    await page.getByRole('button', { name: 'Verify the trail' }).click();
    await page.getByTestId('verification').filter({ hasText: /^Verified: / }).waitFor();
    expect(await page.getByTestId('verification').textContent()).toMatch(/checkpoint signatures valid, signed up to position \d+/);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'logs-integrity.png') });

    // One altered message in what the browser receives: the verification names that log (position 8, seeded first).
    await page.route('**/logs/export?**', async (route) => {
      const response = await route.fetch();
      const body = (await response.text()).replace('"message":"Seeded change 7"', '"message":"Seeded change 7, altered"');
      await route.fulfill({ response, body });
    });
    await page.getByRole('button', { name: 'Verify the trail' }).click();
    await page.getByTestId('verification').filter({ hasText: /^Verification failed: Log 8 / }).waitFor();
    await page.close();
  });

  it('wrote no browser console errors', () => {
    expect(browserErrors).toEqual([]);
  });
});
