import { Route } from 'playwright-core';
import { signIn, WAIT } from './browser';
import { useConsole } from './console.fixture';

/** How long the answer to the older filter is held back: long after the newer filter's answer has come. */
const HELD_MS = 2_500;

/**
 * What the console's queries (TanStack Query, keyed by what they read) promise, in Debian's chromium against the built
 * service: an answer to a filter no longer shown never reaches the page, however late it arrives.
 */
describe('console queries (in chromium)', () => {
  const env = useConsole({});

  it('drops a late answer to an older filter of the logs', async () => {
    const page = await env.browser.newPage('/console/logs');
    // GET /logs?...entity_type=card is answered 2.5 s late, with a log found in no other answer.
    const held = { asked: 0, delivered: 0 };
    await page.route(/\/logs\?.*entity_type=card/, async (route: Route) => {
      if (route.request().resourceType() !== 'fetch') return route.continue();
      held.asked++;
      const response = await route.fetch();
      const body = await response.json();
      const stale = {
        id: 'stale-answer',
        created_at: new Date().toISOString(),
        entity_type: 'card',
        entity_id: 'stale',
        operation: 'update',
        message: 'A stale answer',
        position: 1,
        hash: 'stale',
      };
      await new Promise((resolve) => setTimeout(resolve, HELD_MS));
      await route.fulfill({ response, json: { ...body, data: [stale, ...(body.data ?? [])] } });
      held.delivered++;
    });
    await signIn(page, env.tenant.key);
    const status = page.getByTestId('logs-status');
    await status.filter({ hasText: /logs shown|No logs match/ }).waitFor();

    // Cards (held back), then at once tokens: the cards' answer comes after the tokens' one.
    await page.getByLabel('Entity type').selectOption('card');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const deadline = Date.now() + WAIT;
    while (held.asked === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.asked).toBe(1);
    await page.getByLabel('Entity type').selectOption('token');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await status.filter({ hasText: /logs shown|No logs match/ }).waitFor();
    expect(held.delivered).toBe(0);

    // The late answer arrives: the page still shows the tokens' listing, without it.
    while (held.delivered === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(held.delivered).toBe(1);
    await page.waitForTimeout(300);
    expect(await page.getByText('A stale answer').count()).toBe(0);
    expect(new URL(page.url()).searchParams.get('entity_type')).toBe('token');
    for (const type of await page.locator('tbody tr td:nth-child(2)').allTextContents()) expect(type).toBe('token');

    // Back: the cards' filter again, read afresh (its held answer and its log shown now, as the current one).
    await page.goBack();
    await page.getByText('A stale answer').waitFor();
    expect(held.asked).toBe(2);
    await page.close();
  });

  it('wrote no browser console errors', () => {
    expect(env.browser.errors).toEqual([]);
  });
});
