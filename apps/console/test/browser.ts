import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { REPO_ROOT, ServiceProcess, startServiceProcess } from '@gatehouse/test-support/service-process';
import { TEST_DATABASE_URL, TEST_LOG_SIGNING_KEY } from '@gatehouse/test-support/test-env';

// Functions passed to page.evaluate/waitForFunction run in the browser; this program has no DOM types.
declare const window: any;
declare const document: any;

/** A browser start and a built service on a loaded 2-core machine: generous bounds, and every wait is on a condition. */
export const WAIT = 45_000;
export const TIME_ZONE = 'Europe/Berlin';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Where the tests write their 1280x800 screenshots: tmp/console-screenshots, or docs/console (the console docs' images) with
 * CONSOLE_SCREENSHOTS=docs (`npm run screenshots:console`). Not docs/ on every run: each run's ids and times differ,
 * and a tracked file rewritten by every `npm test` would leave every checkout dirty.
 */
export const SCREENSHOTS = join(REPO_ROOT, process.env.CONSOLE_SCREENSHOTS === 'docs' ? 'docs/console' : 'tmp/console-screenshots');

/** Debian's chromium through playwright-core at 1280x800 in Europe/Berlin, every browser error collected. */
/** The built service the console is tried against: the test database, the test signing key, one sandbox process. */
export function startConsoleService(env: Record<string, string> = {}): Promise<ServiceProcess> {
  return startServiceProcess({ DATABASE_URL: TEST_DATABASE_URL, LOG_SIGNING_KEY: TEST_LOG_SIGNING_KEY, REACTOR_POOL_SIZE: '1', ...env });
}

export class ConsoleBrowser {
  /** Every console error and uncaught page error: a CSP violation shows up here too. */
  readonly errors: string[] = [];

  private constructor(
    private readonly browser: Browser,
    readonly context: BrowserContext,
    private readonly baseUrl: string,
  ) {}

  static async launch(baseUrl: string): Promise<ConsoleBrowser> {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
    if (!existsSync(join(REPO_ROOT, 'dist/console/index.html'))) throw new Error('dist/console is missing: run `npm run build` first');
    const browser = await chromium.launch({
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
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: TIME_ZONE, locale: 'en-GB' });
    context.setDefaultTimeout(WAIT);
    mkdirSync(SCREENSHOTS, { recursive: true });
    return new ConsoleBrowser(browser, context, baseUrl);
  }

  /** A new tab at `path` (e.g. `/console/logs`), its errors collected. */
  async newPage(path: string): Promise<Page> {
    const page = await this.context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') this.errors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => this.errors.push(`${page.url()}: ${error.message}`));
    await page.goto(`${this.baseUrl}${path}`);
    return page;
  }

  /**
   * Removes one expected error (`all`: every one matching) and fails when there is none. The browser reports every 4xx
   * answer as a console error ("the server responded with a status of 400"): a test expecting one removes it.
   */
  expectError(pattern: RegExp, options: { all?: boolean } = {}): void {
    const at = this.errors.findIndex((e) => pattern.test(e));
    if (at < 0) throw new Error(`no browser error matching ${pattern}; errors: ${JSON.stringify(this.errors)}`);
    if (!options.all) this.errors.splice(at, 1);
    else this.errors.splice(0, this.errors.length, ...this.errors.filter((e) => !pattern.test(e)));
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}

/** Pastes `key` into the sign-in form and presses Enter. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.keyboard.press('Enter');
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol, which the page's CSP does not govern: the console's own CSP stays on.
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run: (ctx: unknown, opts: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: unknown[] }> }> };
      }
    ).axe;
    return axe.run(document, { resultTypes: ['violations'] });
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.length})`);
}

/** A 1280x800 screenshot named `name`.png in SCREENSHOTS. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}
