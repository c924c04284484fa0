import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { heartbeatIsFresh, startHeartbeat } from './heartbeat';

describe('worker heartbeat (its container healthcheck)', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-heartbeat-'));
    file = join(dir, 'heartbeat');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is written while the backing services answer, and removed when the worker stops', async () => {
    const stop = startHeartbeat(async () => true, file, 20);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(heartbeatIsFresh(file)).toBe(true);
    stop();
    expect(existsSync(file)).toBe(false);
    expect(heartbeatIsFresh(file)).toBe(false);
  });

  it('is not written while a backing service is down or its check throws', async () => {
    const stopDown = startHeartbeat(async () => false, file, 20);
    const stopThrowing = startHeartbeat(async () => Promise.reject(new Error('redis gone')), file, 20);
    await new Promise((resolve) => setTimeout(resolve, 60));
    stopDown();
    stopThrowing();
    expect(existsSync(file)).toBe(false);
  });

  it('goes stale when not rewritten within the bound', () => {
    writeFileSync(file, 'x');
    const old = (Date.now() - 31_000) / 1000;
    utimesSync(file, old, old);
    expect(heartbeatIsFresh(file, 30_000)).toBe(false);
    expect(heartbeatIsFresh(file, 60_000)).toBe(true);
  });
});
