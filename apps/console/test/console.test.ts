import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Page } from 'playwright-core';
import { AuditEvent, CreatedTenant, LogChainWriter } from '@gatehouse/domain';
import { ServiceProcess } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { ConsoleBrowser, startConsoleService, screenshot, seriousViolations, signIn, TIME_ZONE, WAIT } from './browser';

// Functions passed to page.evaluate/waitForFunction run in the browser; this program has no DOM types.
declare const window: any;
declare const document: any;

jest.setTimeout(180_000);

const SEEDED = 130;
const BASE = Date.UTC(2026, 2, 1);

/** Seeded logs, one a minute: cards and tokens alternating, entity ids e0..e4. */
function seedLogs(tenantId: string): AuditEvent[] {
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
  let browser: ConsoleBrowser;
  let tenant: CreatedTenant;
  let logs: AuditEvent[];

  beforeAll(async () => {
    const admin = await startTestApp();
    try {
      tenant = await admin.tenant();
      logs = seedLogs(tenant.tenant.id);
      await admin.app.get(LogChainWriter).append(logs);
    } finally {
      await admin.close();
    }
    // Checkpoints every second (the least allowed), so the integrity panel has one to show soon.
    service = await startConsoleService({ LOG_CHECKPOINT_INTERVAL_MS: '1000' });
    browser = await ConsoleBrowser.launch(service.consoleUrl!);
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

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
    expect(await page.locator('tbody tr td:last-child').allTextContents()).toEqual(logs.slice(20, 40).reverse().map((l) => l.message));
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
    await screenshot(page, 'logs-integrity');

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

  /** An application made through the API with the tenant's key (what a script or another admin would do). */
  async function createApplication(body: object): Promise<{ id: string; key: string; name: string }> {
    const res = await fetch(`${service.baseUrl}/applications`, {
      method: 'POST',
      headers: { 'svc-api-key': tenant.key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; key: string; name: string };
  }

  /** What the service answers `key` on a call any valid key may make: 200 while it works, 401 once it does not. */
  const keyStatus = async (key: string) => (await fetch(`${service.baseUrl}/permissions?application_type=private`, { headers: { 'svc-api-key': key } })).status;

  const focusedText = (page: Page) => page.evaluate(() => (document.activeElement?.textContent ?? '').trim());

  it('shows only the pages the key may see, and moves between them with the keyboard', async () => {
    const auditor = await createApplication({ name: 'Auditor', type: 'management', permissions: ['log:read', 'application:read'] });
    const page = await newPage('/console/');
    await signIn(page, auditor.key);
    // The root opens the first page the key may see.
    await page.waitForURL(/\/console\/logs$/);
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('link', { name: 'Logs' }).waitFor();
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Logs', 'Applications']);
    expect(await nav.getByRole('link', { name: 'Logs' }).getAttribute('aria-current')).toBe('page');

    // Reading applications without creating them: no "New application".
    await nav.getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Auditor' }).waitFor();
    expect(await page.getByRole('link', { name: 'New application' }).count()).toBe(0);

    // A page the key may not see says why; an unknown address says it is not there.
    await page.goto(`${service.consoleUrl}/console/proxies`);
    await page.getByText('This key may not see proxies: it lacks proxy:read.').waitFor();
    await page.goto(`${service.consoleUrl}/console/nowhere`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // The key deleted under the console (by another administrator): its next call is a 401, and the console asks
    // for a key again, forgetting this one.
    const deleted = await fetch(`${service.baseUrl}/applications/${auditor.id}`, { method: 'DELETE', headers: { 'svc-api-key': tenant.key } });
    expect(deleted.status).toBe(204);
    await nav.getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('alert').filter({ hasText: 'no longer accepts this key' }).waitFor();
    browser.expectError(/status of 401/, { all: true });
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);

    // The tenant's key holds every management permission: every page. From the keyboard: the nav link, Enter, the
    // focus on the new page's heading, Tab to its first control, Enter.
    await signIn(page, tenant.key);
    await nav.getByRole('link', { name: 'Proxies' }).waitFor();
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Logs', 'Log streams', 'Applications', 'Proxies']);
    await nav.getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('heading', { name: 'Audit logs' }).waitFor();
    await nav.getByRole('link', { name: 'Applications' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/applications$/);
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1');
    expect(await focusedText(page)).toBe('Applications');
    await page.keyboard.press('Tab');
    expect(await focusedText(page)).toBe('New application');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/applications\/new$/);
    // The form opens with the focus in its first field.
    await page.waitForFunction(() => document.activeElement?.id === 'app-name');
    // Back returns to the list.
    await page.goBack();
    await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor();
    await page.close();
  });

  it('lists the applications newest first, 20 at a time over the cursor', async () => {
    for (let i = 0; i < 21; i++) await createApplication({ name: `Listed ${String(i).padStart(2, '0')}`, type: 'management', permissions: ['log:read'] });
    // What the API lists now, all pages: the console must show the same, in the same order.
    const expected: string[] = [];
    let start: string | undefined;
    do {
      const res = await fetch(`${service.baseUrl}/applications?size=100${start ? `&start=${encodeURIComponent(start)}` : ''}`, { headers: { 'svc-api-key': tenant.key } });
      const body = (await res.json()) as { data: Array<{ name: string }>; pagination: { next?: string } };
      expected.push(...body.data.map((a) => a.name));
      start = body.pagination.next;
    } while (start);
    expect(expected.length).toBeGreaterThan(20);

    const page = await newPage('/console/applications');
    await signIn(page, tenant.key);
    const status = page.getByTestId('applications-status');
    await status.filter({ hasText: '20 applications shown; more exist.' }).waitFor();
    expect(await page.locator('tbody tr td:first-child').allTextContents()).toEqual(expected.slice(0, 20));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'applications');
    await page.getByRole('button', { name: 'Load more' }).click();
    await status.filter({ hasText: /all of them/ }).waitFor();
    expect(await page.locator('tbody tr td:first-child').allTextContents()).toEqual(expected);
    await page.close();
  });

  it("creates an application: the type's permissions, the API's messages at their fields, and the key shown once", async () => {
    const catalogue = (await (await fetch(`${service.baseUrl}/permissions?application_type=private`, { headers: { 'svc-api-key': tenant.key } })).json()) as Array<{ type: string }>;
    const page = await newPage('/console/applications/new');
    await signIn(page, tenant.key);
    await page.getByRole('heading', { name: 'New application' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Checkout service');

    // The permissions offered are GET /permissions?application_type= of the type chosen.
    const permissions = page.getByRole('group', { name: 'Permissions', exact: true });
    await permissions.getByRole('checkbox', { name: 'token:read' }).waitFor();
    expect(await permissions.locator('label').allTextContents()).toEqual(catalogue.map((p) => p.type));
    await page.getByLabel('Type').selectOption('public');
    await permissions.getByRole('checkbox', { name: 'token:read' }).waitFor({ state: 'detached' });
    await permissions.getByRole('checkbox', { name: 'token:create' }).waitFor();
    expect(await permissions.locator('label').allTextContents()).toEqual(['token:create', 'token:update']);
    await page.getByLabel('Type').selectOption('private');
    await permissions.getByRole('checkbox', { name: 'token:read' }).check();

    // A rule the API refuses: a container without its slashes, no permissions. The messages come back to the fields.
    await page.getByRole('button', { name: 'Add a rule' }).click();
    const rule = page.getByRole('group', { name: 'Rule 1', exact: true });
    await rule.getByLabel('Container').fill('pci');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByTestId('form-problem').waitFor();
    browser.expectError(/status of 400/);
    const container = rule.getByLabel('Container');
    expect(await container.getAttribute('aria-invalid')).toBe('true');
    const containerError = page.locator(`[id="${await container.getAttribute('aria-describedby')}"]`);
    expect(await containerError.textContent()).toBe("must start and end with '/', e.g. /pci/high/");
    const rulePermissions = rule.getByRole('group', { name: 'Permissions of rule 1' });
    expect(await rulePermissions.getAttribute('aria-describedby')).toBeTruthy();
    expect(await page.locator(`[id="${await rulePermissions.getAttribute('aria-describedby')}"]`).textContent()).toMatch(/\S/);
    // The focus goes to the summary, which counts the fields to look at.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('form-problem');
    expect(await page.getByTestId('form-problem').textContent()).toMatch(/See the \d+ fields marked below/);
    expect(await seriousViolations(page)).toEqual([]);
    await rule.scrollIntoViewIfNeeded();
    await screenshot(page, 'application-new');

    // Fixed, and submitted with Enter from the name field.
    await container.fill('/pci/high/');
    await rulePermissions.getByRole('checkbox', { name: 'proxy:invoke' }).check();
    await page.getByLabel('Name', { exact: true }).press('Enter');
    await page.waitForURL(/\/console\/applications\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').pop()!;
    const keyBox = page.getByRole('textbox', { name: 'API key' });
    await keyBox.waitFor();
    const key = await keyBox.inputValue();
    expect(key).toMatch(/^key_[0-9A-Za-z]{32,}$/);
    expect(await keyStatus(key)).toBe(200);
    await page.waitForFunction(() => document.activeElement?.id === 'key-title');
    const stored = await fetch(`${service.baseUrl}/applications/${id}`, { headers: { 'svc-api-key': tenant.key } }).then((r) => r.json());
    expect(stored).toMatchObject({
      name: 'Checkout service',
      type: 'private',
      permissions: ['token:read'],
      rules: [{ priority: 1, transform: 'redact', container: '/pci/high/', permissions: ['proxy:invoke'] }],
    });
    // Held in the page's memory only: not in the address, storage or cookies.
    expect(page.url()).not.toContain(key);
    const storage = await page.evaluate(() => JSON.stringify([{ ...window.sessionStorage }, { ...window.localStorage }]));
    expect(storage).not.toContain(key);
    expect(JSON.stringify(await browser.context.cookies())).not.toContain(key);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'application-key');

    // Shown once: not after a reload, nor after leaving the page and coming back.
    await page.reload();
    await page.getByRole('heading', { name: 'Checkout service', level: 1 }).waitFor();
    await page.getByText('/pci/high/').waitFor();
    expect(await keyBox.count()).toBe(0);
    expect(await page.getByText(key).count()).toBe(0);
    await page.getByRole('link', { name: 'All applications' }).click();
    await page.getByRole('link', { name: 'Checkout service' }).click();
    await page.getByRole('heading', { name: 'Checkout service', level: 1 }).waitFor();
    expect(await keyBox.count()).toBe(0);
    await page.close();
  });

  it("says above the form why the API refuses a grant beyond the caller's own (403)", async () => {
    const provisioner = await createApplication({ name: 'Provisioner', type: 'management', permissions: ['application:create', 'application:read'] });
    const page = await newPage('/console/applications/new');
    await signIn(page, provisioner.key);
    await page.getByLabel('Name', { exact: true }).fill('Proxy admin');
    await page.getByLabel('Type').selectOption('management');
    const permissions = page.getByRole('group', { name: 'Permissions', exact: true });
    await permissions.getByRole('checkbox', { name: 'proxy:create' }).check();
    await page.getByLabel('Name', { exact: true }).press('Enter');
    const problem = page.getByTestId('form-problem');
    await problem.filter({ hasText: 'may not grant what it does not hold itself: proxy:create' }).waitFor();
    browser.expectError(/status of 403/);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('form-problem');
    expect(new URL(page.url()).pathname).toBe('/console/applications/new');
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it('regenerates a key with an overlap, and deletes an application after a confirmation', async () => {
    const app = await createApplication({ name: 'Batch importer', type: 'private', permissions: ['proxy:invoke'] });
    const page = await newPage(`/console/applications/${app.id}`);
    await signIn(page, tenant.key);
    await page.getByRole('heading', { name: 'Batch importer', level: 1 }).waitFor();

    // The overlap is checked by the API; its message is shown at the field, in the dialog.
    await page.getByRole('button', { name: 'Regenerate key' }).click();
    const regenerate = page.getByRole('dialog', { name: 'Regenerate the key of “Batch importer”?' });
    const overlap = regenerate.getByLabel(/Keep the current key working for/);
    await overlap.fill('100000');
    await overlap.press('Enter');
    await regenerate.getByText('must be an integer from 0 to 86400').waitFor();
    browser.expectError(/status of 400/);
    expect(await overlap.getAttribute('aria-invalid')).toBe('true');
    expect(await keyStatus(app.key)).toBe(200);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'application-regenerate');

    await overlap.fill('600');
    await overlap.press('Enter');
    await regenerate.waitFor({ state: 'hidden' });
    await page.getByRole('heading', { name: 'The new key' }).waitFor();
    const fresh = await page.getByRole('textbox', { name: 'API key' }).inputValue();
    expect(fresh).not.toBe(app.key);
    expect(await keyStatus(fresh)).toBe(200);
    // The overlap: the old key keeps working until the time shown.
    expect(await keyStatus(app.key)).toBe(200);
    await page.getByText(`Previous key works until (${TIME_ZONE})`).waitFor();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByRole('textbox', { name: 'API key' }).count()).toBe(0);

    // Delete: Escape cancels (nothing deleted, the focus back on the button), then a confirmed delete.
    const deleteButton = page.getByRole('button', { name: 'Delete', exact: true });
    await deleteButton.click();
    const confirm = page.getByRole('dialog', { name: 'Delete “Batch importer”?' });
    await confirm.waitFor();
    // The dialog opens on Cancel: Enter there deletes nothing.
    expect(await focusedText(page)).toBe('Cancel');
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'hidden' });
    expect(await focusedText(page)).toBe('Delete');
    expect(await keyStatus(fresh)).toBe(200);
    await deleteButton.click();
    await confirm.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'application-delete');
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(/\/console\/applications$/);
    await page.getByRole('status').filter({ hasText: 'Application “Batch importer” deleted' }).waitFor();
    expect(await page.getByRole('link', { name: 'Batch importer' }).count()).toBe(0);
    expect(await keyStatus(fresh)).toBe(401);
    expect(await keyStatus(app.key)).toBe(401);
    // Its page is gone too.
    await page.goto(`${service.consoleUrl}/console/applications/${app.id}`);
    await page.getByText('No such application in this tenant.').waitFor();
    browser.expectError(/status of 404/);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    await page.close();
  });

  it('edits an application (its rate limit refused at the field, then saved) and creates an expiring one with a condition', async () => {
    const app = await createApplication({ name: 'Reporting', type: 'management', permissions: ['log:read'] });
    const page = await newPage(`/console/applications/${app.id}`);
    await signIn(page, tenant.key);
    await page.getByRole('heading', { name: 'Reporting', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit “Reporting”' }).waitFor();
    // The form starts from the application as stored; a management application takes no rules.
    const permissions = page.getByRole('group', { name: 'Permissions', exact: true });
    await permissions.getByRole('checkbox', { name: 'log:read' }).waitFor();
    expect(await permissions.getByRole('checkbox', { name: 'log:read' }).isChecked()).toBe(true);
    expect(await page.getByRole('group', { name: 'Access rules' }).count()).toBe(0);
    await page.getByLabel('Name', { exact: true }).fill('Reporting (read-only)');
    await page.getByLabel('Requests').fill('100');
    const windowSeconds = page.getByLabel('Per window of (seconds)');
    await windowSeconds.fill('0');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('form-problem').waitFor();
    browser.expectError(/status of 400/);
    expect(await windowSeconds.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`[id="${await windowSeconds.getAttribute('aria-describedby')}"]`).textContent()).toMatch(/\S/);
    expect(await page.getByLabel('Requests').getAttribute('aria-invalid')).toBeNull();
    await windowSeconds.fill('60');
    await windowSeconds.press('Enter');
    await page.getByRole('heading', { name: 'Reporting (read-only)', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/applications/${app.id}`);
    await page.getByText('100 requests per 60 s').waitFor();
    const stored = await fetch(`${service.baseUrl}/applications/${app.id}`, { headers: { 'svc-api-key': tenant.key } }).then((r) => r.json());
    expect(stored).toMatchObject({ name: 'Reporting (read-only)', permissions: ['log:read'], rate_limit: { limit: 100, window_seconds: 60 } });
    // An edit never shows a key.
    expect(await page.getByRole('textbox', { name: 'API key' }).count()).toBe(0);

    // Expiring: the expiry field, and rules scoped by conditions instead of a container.
    await page.goto(`${service.consoleUrl}/console/applications/new`);
    await page.getByLabel('Name', { exact: true }).fill('One-off export');
    await page.getByLabel('Type').selectOption('expiring');
    await page.getByLabel(`Expires at (${TIME_ZONE}, optional)`).waitFor();
    await page.getByRole('button', { name: 'Add a rule' }).click();
    const rule = page.getByRole('group', { name: 'Rule 1', exact: true });
    expect(await rule.getByLabel('Container').count()).toBe(0);
    await rule.getByRole('group', { name: 'Permissions of rule 1' }).getByRole('checkbox', { name: 'token:read' }).check();
    await rule.getByLabel('Condition 1: attribute').selectOption('container');
    const value = rule.getByLabel('Value');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByTestId('form-problem').waitFor();
    browser.expectError(/status of 400/);
    expect(await value.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`[id="${await value.getAttribute('aria-describedby')}"]`).textContent()).toBe('value must be longer than or equal to 1 characters');
    await value.fill('/exports/');
    await value.press('Enter');
    await page.getByRole('heading', { name: 'One-off export', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'API key' }).waitFor();
    await page.getByText(`Expires (${TIME_ZONE})`).waitFor();
    await page.getByText('container starts with /exports/').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it("follows an edit of the signed-in key's own application: a page it no longer may see leaves the navigation", async () => {
    const self = await createApplication({ name: 'Self editor', type: 'management', permissions: ['application:read', 'application:update', 'log:read', 'proxy:read'] });
    const page = await newPage(`/console/applications/${self.id}/edit`);
    await signIn(page, self.key);
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('link', { name: 'Proxies' }).waitFor();
    const permissions = page.getByRole('group', { name: 'Permissions', exact: true });
    await permissions.getByRole('checkbox', { name: 'proxy:read' }).uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Self editor', level: 1 }).waitFor();
    await nav.getByRole('link', { name: 'Proxies' }).waitFor({ state: 'detached' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Logs', 'Applications']);
    // And the service agrees: the key reads its own application without proxy:read.
    const own = (await fetch(`${service.baseUrl}/applications/key`, { headers: { 'svc-api-key': self.key } }).then((r) => r.json())) as { permissions: string[] };
    expect(own.permissions).not.toContain('proxy:read');
    await page.close();
  });

  it('signs in with a key that may not read its own application (log:read alone), showing the pages it may list', async () => {
    const reader = await createApplication({ name: 'Log reader', type: 'management', permissions: ['log:read'] });
    const page = await newPage('/console/');
    await signIn(page, reader.key);
    await page.getByRole('heading', { name: 'Audit logs' }).waitFor();
    await page.getByText('Signed in with a key that may not read its own application').waitFor();
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).toEqual(['Logs']);
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length > 0);
    // What it took to find out: GET /applications/key and GET /proxies refused.
    browser.expectError(/status of 403/, { all: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it('wrote no browser console errors', () => {
    expect(browser.errors).toEqual([]);
  });
});
