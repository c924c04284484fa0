import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_MAIN, CLI_BIN, runToCompletion, startServiceProcess } from '@gatehouse/test-support/service-process';

/**
 * `npm start` on the embedded database (PGlite in DATA_DIR) and the CLI beside it. It used to be that `tenant create`
 * against a running service opened the same files a second time: it printed a key the service rejected, and the
 * tenant was gone after a restart; a second `npm start` opened them too.
 */
describe('the embedded database (DATA_DIR)', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-embedded-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const cli = (...args: string[]) => runToCompletion(CLI_BIN, args, { DATA_DIR: dataDir });
  const status = async (baseUrl: string, key: string) => (await fetch(`${baseUrl}/applications/key`, { headers: { 'svc-api-key': key } })).status;

  it('is opened by one process only; the CLI works with or without the service, and nothing it wrote is lost', async () => {
    // No service: the CLI opens the database itself; a second command at the same moment waits for the first.
    const [before, alongside] = await Promise.all([cli('tenant', 'create', '--name', 'before', '--json'), cli('tenant', 'create', '--name', 'alongside')]);
    expect(before.code).toBe(0);
    expect(alongside).toMatchObject({ code: 0, stderr: '' });
    const beforeKey: string = JSON.parse(before.stdout).application.key;
    const names = async () =>
      JSON.parse((await cli('tenant', 'list', '--json')).stdout)
        .map((t: { name: string }) => t.name)
        .sort();

    const service = await startServiceProcess({ DATA_DIR: dataDir });
    try {
      expect(await status(service.baseUrl, beforeKey)).toBe(200);

      // The service owns DATA_DIR: the command runs in it, so the key it prints is one the service accepts.
      const during = await cli('tenant', 'create', '--name', 'during', '--json');
      expect(during.code).toBe(0);
      const duringKey: string = JSON.parse(during.stdout).application.key;
      expect(await status(service.baseUrl, duringKey)).toBe(200);
      expect(await names()).toEqual(['alongside', 'before', 'during']);
      const duplicate = await cli('tenant', 'create', '--name', 'during');
      expect(duplicate).toMatchObject({ code: 1, stderr: "gatehouse: A tenant named 'during' already exists\n" });

      // A second service on the same directory stops with one line, and the first one is unharmed.
      const second = await runToCompletion(API_MAIN, [], { DATA_DIR: dataDir, PORT: '0' });
      expect(second.code).toBe(1);
      expect(second.stderr.trim().split('\n')).toHaveLength(1);
      expect(second.stderr).toMatch(/^gatehouse: failed to start: DATA_DIR \S+ is in use by another gatehouse process \(pid \d+\)/);
      expect((await fetch(`${service.baseUrl}/health/ready`)).status).toBe(200);
      expect(await status(service.baseUrl, duringKey)).toBe(200);
    } finally {
      // Killed, not stopped: a crashed owner must leave no lock behind, and what it committed is on disk.
      await service.stop('SIGKILL');
    }

    const restarted = await startServiceProcess({ DATA_DIR: dataDir });
    try {
      expect(await status(restarted.baseUrl, beforeKey)).toBe(200);
      expect(await names()).toEqual(['alongside', 'before', 'during']);
      const rotated = await cli('tenant', 'rotate-key', 'during', '--json');
      expect(rotated.code).toBe(0);
      expect(await status(restarted.baseUrl, JSON.parse(rotated.stdout).application.key)).toBe(200);
    } finally {
      expect(await restarted.stop('SIGTERM')).toBe(0);
    }

    // Stopped cleanly: the CLI opens the database itself again.
    expect((await cli('tenant', 'show', 'during')).code).toBe(0);
  }, 300_000);
});
