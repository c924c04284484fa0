import { readFileSync } from 'node:fs';
import { Page } from 'playwright-core';
import { AuditEvent, CreatedTenant } from '@gatehouse/domain';
import { ServiceProcess } from '@gatehouse/test-support/service-process';
import { ConsoleBrowser, screenshot, seriousViolations, signIn, TIME_ZONE, WAIT } from './browser';
import { SEEDED, useConsole } from './console.fixture';

// Functions passed to page.evaluate/waitForFunction run in the browser; this program has no DOM types.
declare const window: any;
declare const document: any;

/** The console in Debian's chromium against the built service (`npm run build` puts the console in dist/console). */
describe('console (in chromium)', () => {
  const env = useConsole();
  let service: ServiceProcess;
  let browser: ConsoleBrowser;
  let tenant: CreatedTenant;
  let logs: AuditEvent[];
  beforeAll(() => ({ service, browser, tenant, logs } = env));

  const newPage = (path: string) => browser.newPage(path);
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

  it('is served at /console with a strict Content-Security-Policy, and deep links open the page', async () => {
    for (const path of ['/console/', '/console/logs?entity_type=card']) {
      const res = await fetch(`${service.consoleUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(await res.text()).toContain('<div id="root"></div>');
    }
    expect((await fetch(`${service.consoleUrl}/console/assets/nothing-here.js`)).status).toBe(404);
    // The API's port serves no console (its origin serves tenants' bytes under /proxy): it sends the same page there.
    const moved = await fetch(`${service.baseUrl}/console/logs?entity_type=card`, { redirect: 'manual' });
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe(`${service.consoleUrl}/console/logs?entity_type=card`);
  });

  it('refuses a wrong key, signs in with the keyboard, keeps the key in sessionStorage only, and signs out', async () => {
    const page = await newPage('/console/');
    await signIn(page, 'key_not-a-real-key-at-all-0000000000');
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
    // The refused key's 401 is the one browser error this test expects.
    browser.expectError(/status of 401/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in');

    await signIn(page, tenant.key);
    await page.getByText('Signed in as').waitFor();
    expect(await page.evaluate(() => window.sessionStorage.getItem('gatehouse.console.key'))).toBe(tenant.key);
    expect(await page.evaluate(() => window.localStorage.length)).toBe(0);
    expect(await browser.context.cookies()).toEqual([]);

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
    await screenshot(page, 'logs');

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
    await screenshot(page, 'logs-detail');

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
    expect(await page.locator('tbody tr td:last-child').allTextContents()).toEqual(
      logs
        .slice(20, 40)
        .reverse()
        .map((l) => l.message),
    );
    // 2026-03-01T00:20Z is 01:20 in Berlin (UTC+1 in March before the switch).
    expect(await page.getByLabel(`From (${TIME_ZONE})`).inputValue()).toBe('2026-03-01T01:20');

    const actor = logs[10]!.actorId!;
    await page.goto(`${service.consoleUrl}/console/logs?actor_id=${actor}`);
    expect(await scrollToEnd(page)).toBe(1);
    expect(await page.locator('tbody tr td:last-child').allTextContents()).toEqual([logs[10]!.message]);

    // A bad filter is the API's 400, said in the page, not a crash.
    await page.goto(`${service.consoleUrl}/console/logs?actor_id=not-a-uuid`);
    await page.getByRole('alert').waitFor();
    browser.expectError(/status of 400/);
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
    const exported = readFileSync(await ndjson.path(), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(exported.map((l: { id: string }) => l.id)).toEqual(cardsE2.map((l) => l.id));
    expect(exported.every((l: { hash: string }) => /^[0-9a-f]{64}$/.test(l.hash))).toBe(true);

    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'CSV' }).click()]);
    expect(csv.suggestedFilename()).toMatch(/\.csv$/);
    const rows = readFileSync(await csv.path(), 'utf8')
      .trim()
      .split(/\r?\n/);
    expect(rows).toHaveLength(cardsE2.length + 1);
    expect(rows[1]).toContain(cardsE2[0]!.id);

    // The whole trail recomputed in the browser (SHA-256 chain, Ed25519 checkpoint signatures).
    await page.getByRole('button', { name: 'Verify the trail' }).click();
    await page
      .getByTestId('verification')
      .filter({ hasText: /^Verified: / })
      .waitFor();
    expect(await page.getByTestId('verification').textContent()).toMatch(/checkpoint signatures valid, signed up to position \d+/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'logs-integrity');

    // One altered message in what the browser receives: the verification names that log (position 8, seeded first).
    await page.route('**/logs/export?**', async (route) => {
      const response = await route.fetch();
      const body = (await response.text()).replace('"message":"Seeded change 7"', '"message":"Seeded change 7, altered"');
      await route.fulfill({ response, body });
    });
    await page.getByRole('button', { name: 'Verify the trail' }).click();
    await page
      .getByTestId('verification')
      .filter({ hasText: /^Verification failed: Log 8 / })
      .waitFor();
    await page.close();
  });

  /** An application made through the API with the tenant's key (what a script or another admin would do). */
  it('wrote no browser console errors', () => {
    expect(browser.errors).toEqual([]);
  });
});
