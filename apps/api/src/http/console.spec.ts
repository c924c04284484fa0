import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { FinishedRequest, requestObserver } from './access-log';
import { mountConsole, STYLE_NONCE_PLACEHOLDER } from './console';

/** The console as the access log and the metrics see it: two route labels, whatever the path. */
describe('console routes', () => {
  let dir: string;
  let finished: FinishedRequest[];
  let app: express.Express;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), `<meta name="style-nonce" content="${STYLE_NONCE_PLACEHOLDER}">`);
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    finished = [];
    app = express();
    app.use(requestObserver([(f) => finished.push(f)]));
    mountConsole(app as unknown as NestExpressApplication, dir);
  });

  /** The route of the one request observed (reported when its response closes, just after the client has it). */
  async function routeOf(path: string, status: number): Promise<string> {
    await request(app).get(path).expect(status);
    for (let i = 0; i < 50 && finished.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(finished).toHaveLength(1);
    return finished[0].route;
  }

  it('labels every page (deep links included) /console/*', async () => {
    expect(await routeOf('/console', 200)).toBe('/console/*');
    finished = [];
    expect(await routeOf('/console/logs?entity_type=card', 200)).toBe('/console/*');
  });

  it('labels assets, found or not, /console/assets/*', async () => {
    expect(await routeOf('/console/assets/index-abc123.js', 200)).toBe('/console/assets/*');
    finished = [];
    expect(await routeOf('/console/assets/missing-0000.js', 404)).toBe('/console/assets/*');
  });

  it('leaves paths outside the console unmatched', async () => {
    expect(await routeOf('/nowhere', 404)).toBe('unmatched');
  });
});
