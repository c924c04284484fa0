import { Page } from 'playwright-core';
import { screenshot, seriousViolations, signIn, TIME_ZONE } from './browser';
import { useConsole } from './console.fixture';

// Functions passed to page.evaluate/waitForFunction run in the browser; this program has no DOM types.
declare const window: any;
declare const document: any;

/** The console's sign-in, navigation and applications pages in Debian's chromium against the built service. */
describe('console applications (in chromium)', () => {
  const env = useConsole();

  const newPage = (path: string) => env.browser.newPage(path);

  async function createApplication(body: object): Promise<{ id: string; key: string; name: string }> {
    const res = await fetch(`${env.service.baseUrl}/applications`, {
      method: 'POST',
      headers: { 'svc-api-key': env.tenant.key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; key: string; name: string };
  }

  /** What the service answers `key` on a call any valid key may make: 200 while it works, 401 once it does not. */
  const keyStatus = async (key: string) =>
    (await fetch(`${env.service.baseUrl}/permissions?application_type=private`, { headers: { 'svc-api-key': key } })).status;

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
    await page.goto(`${env.service.consoleUrl}/console/proxies`);
    await page.getByText('This key may not see proxies: it lacks proxy:read.').waitFor();
    await page.goto(`${env.service.consoleUrl}/console/nowhere`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // The key deleted under the console (by another administrator): its next call is a 401, and the console asks
    // for a key again, forgetting this one.
    const deleted = await fetch(`${env.service.baseUrl}/applications/${auditor.id}`, { method: 'DELETE', headers: { 'svc-api-key': env.tenant.key } });
    expect(deleted.status).toBe(204);
    await nav.getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('alert').filter({ hasText: 'no longer accepts this key' }).waitFor();
    env.browser.expectError(/status of 401/, { all: true });
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);

    // The tenant's key holds every management permission: every page. From the keyboard: the nav link, Enter, the
    // focus on the new page's heading, Tab to its first control, Enter.
    await signIn(page, env.tenant.key);
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
      const res = await fetch(`${env.service.baseUrl}/applications?size=100${start ? `&start=${encodeURIComponent(start)}` : ''}`, {
        headers: { 'svc-api-key': env.tenant.key },
      });
      const body = (await res.json()) as { data: Array<{ name: string }>; pagination: { next?: string } };
      expected.push(...body.data.map((a) => a.name));
      start = body.pagination.next;
    } while (start);
    expect(expected.length).toBeGreaterThan(20);

    const page = await newPage('/console/applications');
    await signIn(page, env.tenant.key);
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
    const catalogue = (await (
      await fetch(`${env.service.baseUrl}/permissions?application_type=private`, { headers: { 'svc-api-key': env.tenant.key } })
    ).json()) as Array<{ type: string }>;
    const page = await newPage('/console/applications/new');
    await signIn(page, env.tenant.key);
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
    env.browser.expectError(/status of 400/);
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
    const stored = await fetch(`${env.service.baseUrl}/applications/${id}`, { headers: { 'svc-api-key': env.tenant.key } }).then((r) => r.json());
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
    expect(JSON.stringify(await env.browser.context.cookies())).not.toContain(key);
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
    env.browser.expectError(/status of 403/);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('form-problem');
    expect(new URL(page.url()).pathname).toBe('/console/applications/new');
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it('regenerates a key with an overlap, and deletes an application after a confirmation', async () => {
    const app = await createApplication({ name: 'Batch importer', type: 'private', permissions: ['proxy:invoke'] });
    const page = await newPage(`/console/applications/${app.id}`);
    await signIn(page, env.tenant.key);
    await page.getByRole('heading', { name: 'Batch importer', level: 1 }).waitFor();

    // The overlap is checked by the API; its message is shown at the field, in the dialog.
    await page.getByRole('button', { name: 'Regenerate key' }).click();
    const regenerate = page.getByRole('dialog', { name: 'Regenerate the key of “Batch importer”?' });
    const overlap = regenerate.getByLabel(/Keep the current key working for/);
    await overlap.fill('100000');
    await overlap.press('Enter');
    await regenerate.getByText('must be an integer from 0 to 86400').waitFor();
    env.browser.expectError(/status of 400/);
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
    await page.goto(`${env.service.consoleUrl}/console/applications/${app.id}`);
    await page.getByText('No such application in this tenant.').waitFor();
    env.browser.expectError(/status of 404/);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    await page.close();
  });

  it('edits an application (its rate limit refused at the field, then saved) and creates an expiring one with a condition', async () => {
    const app = await createApplication({ name: 'Reporting', type: 'management', permissions: ['log:read'] });
    const page = await newPage(`/console/applications/${app.id}`);
    await signIn(page, env.tenant.key);
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
    env.browser.expectError(/status of 400/);
    expect(await windowSeconds.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`[id="${await windowSeconds.getAttribute('aria-describedby')}"]`).textContent()).toMatch(/\S/);
    expect(await page.getByLabel('Requests').getAttribute('aria-invalid')).toBeNull();
    await windowSeconds.fill('60');
    await windowSeconds.press('Enter');
    await page.getByRole('heading', { name: 'Reporting (read-only)', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/applications/${app.id}`);
    await page.getByText('100 requests per 60 s').waitFor();
    const stored = await fetch(`${env.service.baseUrl}/applications/${app.id}`, { headers: { 'svc-api-key': env.tenant.key } }).then((r) => r.json());
    expect(stored).toMatchObject({ name: 'Reporting (read-only)', permissions: ['log:read'], rate_limit: { limit: 100, window_seconds: 60 } });
    // An edit never shows a key.
    expect(await page.getByRole('textbox', { name: 'API key' }).count()).toBe(0);

    // Expiring: the expiry field, and rules scoped by conditions instead of a container.
    await page.goto(`${env.service.consoleUrl}/console/applications/new`);
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
    env.browser.expectError(/status of 400/);
    expect(await value.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`[id="${await value.getAttribute('aria-describedby')}"]`).textContent()).toBe(
      'value must be longer than or equal to 1 characters',
    );
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
    const self = await createApplication({
      name: 'Self editor',
      type: 'management',
      permissions: ['application:read', 'application:update', 'log:read', 'proxy:read'],
    });
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
    const own = (await fetch(`${env.service.baseUrl}/applications/key`, { headers: { 'svc-api-key': self.key } }).then((r) => r.json())) as {
      permissions: string[];
    };
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
    env.browser.expectError(/status of 403/, { all: true });
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  // What the logs' file checks in its last test, here after all of them: no console errors in the browser.
  afterAll(() => expect(env.browser.errors).toEqual([]));
});
