import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_BIN, firstManagementKey, runToCompletion, startServiceProcess } from '@gatehouse/test-support/service-process';

/**
 * `npm start` with no VAULT_KEY: the key-encryption key is generated into DATA_DIR, and `gatehouse vault rotate-key`
 * (carried out by the running service over its control socket) makes a new one and re-wraps every key under it, with
 * proxies readable throughout and after a restart.
 */
describe('vault keys on the embedded database, generated into DATA_DIR', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-vault-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  // VAULT_KEY '': none given, as `npm start` runs by default.
  const env = () => ({ DATA_DIR: dataDir, VAULT_KEY: '' });
  const cli = (...args: string[]) => runToCompletion(CLI_BIN, args, env());

  it('generates the key once, rotates it online, and reads every proxy after a restart', async () => {
    const service = await startServiceProcess(env());
    let proxy: { id: string; key: string };
    let admin: string;
    try {
      admin = await firstManagementKey(service);
      const file = join(dataDir, 'vault-key');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(service.stdout()).toContain('a key-encryption key was generated into DATA_DIR');
      expect(service.output()).not.toContain(readFileSync(file, 'utf8').trim());
      const created = await fetch(`${service.baseUrl}/proxies`, {
        method: 'POST',
        headers: { 'svc-api-key': admin, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'p', destination_url: 'https://api.example.com', configuration: { SECRET: 'sk_embedded' } }),
      });
      expect(created.status).toBe(201);
      proxy = (await created.json()) as { id: string; key: string };
      const before = JSON.parse((await cli('vault', 'status', '--json')).stdout);

      const rotated = await cli('vault', 'rotate-key', '--json');
      expect(rotated.code).toBe(0);
      const result = JSON.parse(rotated.stdout);
      // The global lookup key and the tenant's data key.
      expect(result).toMatchObject({ new_key_generated: true, rewrapped: 2 });
      expect(result.kek_id).not.toBe(before.kek_id);
      expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
      expect(JSON.parse((await cli('vault', 'status', '--json')).stdout).keys_by_kek).toEqual({ [result.kek_id]: 2 });
      const read = await fetch(`${service.baseUrl}/proxies/${proxy.id}`, { headers: { 'svc-api-key': admin } });
      expect(await read.json()).toMatchObject({ key: proxy.key, configuration: { SECRET: 'sk_embedded' } });
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }

    const restarted = await startServiceProcess(env());
    try {
      const read = await fetch(`${restarted.baseUrl}/proxies/${proxy.id}`, { headers: { 'svc-api-key': admin } });
      expect(await read.json()).toMatchObject({ key: proxy.key, configuration: { SECRET: 'sk_embedded' } });
    } finally {
      expect(await restarted.stop('SIGTERM')).toBe(0);
    }
  });
});
