import { Page } from 'playwright-core';
import { screenshot, seriousViolations, signIn as pasteKey, WAIT } from './browser';
import { useConsole } from './console.fixture';

// Functions passed to page.evaluate/waitForFunction run in the browser; this program has no DOM types.
declare const window: any;
declare const document: any;

// A browser start and a built service on a loaded 2-core machine: generous bounds, and every wait is on a condition.
jest.setTimeout(240_000);

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };
/** The card the console creates, and a number failing the Luhn check it is first typed as. */
const NEW_NUMBER = '4000056655665556';
const BAD_NUMBER = '4000056655665557';
const ALL_TOKEN_PERMISSIONS = ['token:create', 'token:read', 'token:delete'];

/** The console's tokens pages in Debian's chromium against the built service, with keys whose rules differ. */
describe('console tokens (in chromium)', () => {
  const env = useConsole({ reportCsp: true });
  const { api } = env;
  /** Plain permissions on a private application: the lowest rule, `mask`. */
  let masker: string;
  /** A `reveal` rule on `/`. */
  let revealer: string;
  /** A `redact` rule on `/`. */
  let redactor: string;
  let card: string;
  /** Every console message of every page, to show that no value typed or read is logged. */
  const consoleLines: string[] = [];

  async function application(body: object): Promise<string> {
    const res = await api(env.tenant.key, 'POST', '/applications', body);
    if (res.status !== 201) throw new Error(`application: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json.key;
  }

  beforeAll(async () => {
    const rule = (transform: string) => [{ priority: 1, container: '/', transform, permissions: ALL_TOKEN_PERMISSIONS }];
    masker = await application({ name: 'masker', type: 'private', permissions: ALL_TOKEN_PERMISSIONS });
    revealer = await application({ name: 'revealer', type: 'private', permissions: [], rules: rule('reveal') });
    redactor = await application({ name: 'redactor', type: 'private', permissions: [], rules: rule('redact') });
    const created = await api(revealer, 'POST', '/tokens', { type: 'card', data: CARD, metadata: { customer: 'c_1' } });
    expect(created.status).toBe(201);
    card = created.json.id;
    expect(
      (
        await api(revealer, 'POST', '/tokens', {
          type: 'bank',
          data: { routing_number: '021000021', account_number: '123456789' },
          metadata: { customer: 'c_2' },
        })
      ).status,
    ).toBe(201);
    // 23 tokens in a container of their own: two pages of 20.
    const paged = Array.from({ length: 23 }, (_, i) => ({ type: 'token', data: { n: i }, containers: ['/paging/'], metadata: { batch: 'p' } }));
    expect((await api(revealer, 'POST', '/tokenize', paged)).status).toBe(200);
  });

  async function openAs(key: string, path: string): Promise<Page> {
    const page = await env.browser.newPage(path);
    page.on('console', (message) => consoleLines.push(message.text()));
    await pasteKey(page, key);
    // A private application's key may not read its own application: the console asks the lists what it may see.
    await page.getByText('Signed in with a key that may not read its own application').waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Tokens' }).waitFor();
    return page;
  }

  const status = (page: Page) => page.getByTestId('tokens-status');
  const rows = (page: Page) => page.locator('tbody tr');

  /** What the page could keep: its address, its history entry, sessionStorage (the key alone) and localStorage. */
  async function kept(page: Page): Promise<string> {
    return page.evaluate(() => JSON.stringify([window.location.href, window.history.state, { ...window.sessionStorage }, { ...window.localStorage }]));
  }

  it('lists and searches by container, type and metadata, pages over the cursor, and keeps the search in the address', async () => {
    const page = await openAs(masker, '/console/');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('heading', { name: 'Tokens', level: 1 }).waitFor();
    await status(page)
      .getByText(/20 tokens shown; more exist/)
      .waitFor();

    await page.getByLabel('Type').selectOption('bank');
    await page.getByRole('button', { name: 'Search' }).click();
    await status(page).getByText('1 tokens shown: the end of the list.').waitFor();
    expect(page.url()).toMatch(/\/console\/tokens\?type=bank$/);
    expect(await rows(page).first().textContent()).toContain('customer=c_2');

    await page.getByLabel('Type').selectOption('');
    await page.getByLabel('Metadata key').fill('customer');
    await page.getByLabel('Metadata value').fill('c_1');
    await page.getByRole('button', { name: 'Search' }).click();
    await status(page).getByText('1 tokens shown: the end of the list.').waitFor();
    await expect(rows(page).first().getAttribute('data-token-id')).resolves.toBe(card);
    expect(page.url()).toContain('metadata.customer=c_1');

    // Back returns to the previous search; a deep link opens a search as it was.
    await page.goBack();
    await status(page).getByText('1 tokens shown: the end of the list.').waitFor();
    expect(await rows(page).first().textContent()).toContain('customer=c_2');
    await page.goto(`${env.service.consoleUrl}/console/tokens?container=%2Fpaging%2F`);
    await status(page).getByText('20 tokens shown; more exist.').waitFor();
    await expect(page.getByLabel('Container starts with').inputValue()).resolves.toBe('/paging/');
    await page.getByRole('button', { name: 'Load more' }).click();
    await status(page).getByText('23 tokens shown: the end of the list.').waitFor();
    expect(await rows(page).count()).toBe(23);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'tokens');
    await page.close();
  });

  it("shows a token's data as the key's rule decides: masked, revealed, or redacted (said so)", async () => {
    const masked = await openAs(masker, `/console/tokens/${card}`);
    await masked
      .getByTestId('token-data')
      .getByText(/424242XXXXXX4242/)
      .waitFor();
    expect(await seriousViolations(masked)).toEqual([]);
    expect(await masked.getByTestId('token-data').textContent()).not.toContain(CARD.cvc);
    expect(await masked.content()).not.toContain(CARD.number);
    await masked.close();

    const revealed = await openAs(revealer, `/console/tokens/${card}`);
    await revealed.getByTestId('token-data').getByText(CARD.number, { exact: false }).waitFor();
    expect(await revealed.getByTestId('token-data').textContent()).toContain(`"cvc": "${CARD.cvc}"`);
    await screenshot(revealed, 'token-revealed');
    // Seen, never kept: not in the address, the history entry or either storage.
    expect(await kept(revealed)).not.toContain(CARD.number);
    await revealed.close();

    const redacted = await openAs(redactor, `/console/tokens/${card}`);
    await redacted
      .getByTestId('token-data')
      .getByText(/Redacted: this key's access rule returns no data/)
      .waitFor();
    expect(await redacted.content()).not.toContain('424242');
    await redacted.close();
  });

  it("creates a card with its own fields, showing the API's 400 beside the field without echoing the value", async () => {
    const page = await openAs(masker, '/console/tokens');
    await page.getByRole('link', { name: 'New token' }).click();
    await page.getByRole('heading', { name: 'New token' }).waitFor();
    await page.getByLabel('Card number').fill(BAD_NUMBER);
    await page.getByLabel('Expiration month').fill('11');
    await page.getByLabel('Expiration year').fill('2031');
    await page.getByLabel('CVC').fill('987');
    await page.getByRole('button', { name: 'Add metadata' }).click();
    await page.getByLabel('Key').fill('customer');
    await page.getByLabel('Value').fill('c_new');
    await page.getByRole('button', { name: 'Create token' }).click();
    // The message under the card number field, which is marked invalid; the value appears nowhere but in its input.
    const number = page.getByLabel('Card number');
    await page.locator('#tk-number-error').waitFor();
    await expect(number.getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByRole('alert').getByText('Fields: data.number.', { exact: false }).waitFor();
    expect(await page.evaluate(() => document.body.innerText)).not.toContain(BAD_NUMBER);
    expect(await kept(page)).not.toContain(BAD_NUMBER);
    env.browser.expectError(/status of 400/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'token-new-refused');

    // A generic token's JSON is checked before it is sent, its text never quoted.
    await page.getByLabel('Type').selectOption('token');
    await page.getByLabel('Data (JSON)').fill('{"secret": 4111111111111111');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('#tk-json-error').getByText('Not valid JSON.').waitFor();
    expect(await page.evaluate(() => document.body.innerText)).not.toContain('4111111111111111');

    await page.getByLabel('Type').selectOption('card');
    await page.getByLabel('Card number').fill(NEW_NUMBER);
    await page.getByLabel('Expiration month').fill('11');
    await page.getByLabel('Expiration year').fill('2031');
    await page.getByLabel('CVC').fill('987');
    await page.getByRole('button', { name: 'Create token' }).click();
    // The new token's page, as this key (mask) sees it.
    await page
      .getByTestId('token-data')
      .getByText(/400005XXXXXX5556/)
      .waitFor();
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    const stored = await api(revealer, 'GET', `/tokens/${id}`);
    expect(stored.json.data).toEqual({ number: NEW_NUMBER, expiration_month: 11, expiration_year: 2031, cvc: '987' });
    expect(stored.json.metadata).toEqual({ customer: 'c_new' });
    expect(await kept(page)).not.toContain(NEW_NUMBER);
    expect(await page.content()).not.toContain(NEW_NUMBER);
    await page.close();
  });

  it('deletes a token only after confirmation', async () => {
    const victim = await api(revealer, 'POST', '/tokens', { type: 'card_number', data: '5555555555554444' });
    expect(victim.status).toBe(201);
    const page = await openAs(masker, `/console/tokens/${victim.json.id}`);
    await page.getByTestId('token-data').waitFor();
    await page.getByRole('button', { name: 'Delete token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this token?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await api(revealer, 'GET', `/tokens/${victim.json.id}`)).status).toBe(200);

    await page.getByRole('button', { name: 'Delete token' }).click();
    await dialog.getByRole('button', { name: 'Delete token' }).click();
    await page.getByRole('heading', { name: 'Tokens', level: 1 }).waitFor({ timeout: WAIT });
    expect(new URL(page.url()).pathname).toBe('/console/tokens');
    expect((await api(revealer, 'GET', `/tokens/${victim.json.id}`)).status).toBe(404);
    await page.close();
  });

  it('logged no card number and broke no CSP rule', () => {
    for (const value of [CARD.number, NEW_NUMBER, BAD_NUMBER]) expect(consoleLines.join('\n')).not.toContain(value);
    // Each sign-in's probes of the lists these keys may not read (logs, proxies) answer 403: the only errors expected.
    env.browser.expectError(/status of 403/, { all: true });
    expect(env.browser.errors).toEqual([]);
  });
});
