import { RateLimit } from '@gatehouse/domain';
import type { CommandContext } from './command';
import { execute } from './execute';

const TENANT = '7D0F4A8E-1C2B-4D3E-9F60-123456789ABC';

/** `gatehouse tenant rate-limit ARGS` through the CLI's runner, with the use case it would call recorded. */
async function run(args: string[]) {
  const calls: [string, RateLimit | null][] = [];
  const app = { get: () => ({ execute: async (tenantId: string, limit: RateLimit | null) => void calls.push([tenantId, limit]) }) };
  const result = await execute(['tenant', 'rate-limit', ...args], {
    open: async () => ({ app }) as unknown as CommandContext,
    close: async () => undefined,
  });
  return { ...result, calls };
}

describe('gatehouse tenant rate-limit: its command line', () => {
  it('reads a limit, or --clear', async () => {
    const set = await run(['--tenant', TENANT, '--limit', '100', '--window-seconds', '60']);
    expect(set).toMatchObject({ code: 0, calls: [[TENANT.toLowerCase(), { limit: 100, windowSeconds: 60 }]] });
    const cleared = await run(['--tenant', TENANT, '--clear', '--json']);
    expect(cleared).toMatchObject({ code: 0, calls: [[TENANT.toLowerCase(), null]] });
    expect(JSON.parse(cleared.stdout)).toEqual({ tenant_id: TENANT.toLowerCase(), default_rate_limit: null });
  });

  it.each([
    [['--limit', '5', '--window-seconds', '60'], /--tenant must be a tenant id/],
    [['--tenant', 'nope', '--limit', '5', '--window-seconds', '60'], /--tenant must be a tenant id/],
    [['--tenant', TENANT, '--limit', '0', '--window-seconds', '60'], /positive integers/],
    [['--tenant', TENANT, '--limit', '1e3', '--window-seconds', '60'], /positive integers/],
    [['--tenant', TENANT, '--limit', '5'], /positive integers/],
    [['--tenant', TENANT], /positive integers .*--clear/],
    [['--tenant', TENANT, '--clear', '--limit', '5'], /--clear takes no/],
    [['--tenant', TENANT, '--bogus'], /Unknown option '--bogus'/],
    [['--tenant', TENANT, 'stray'], /takes no argument 'stray'/],
  ])('refuses %j (exit 2, nothing set)', async (args, message) => {
    const refused = await run(args);
    expect(refused).toMatchObject({ code: 2, stdout: '', calls: [] });
    expect(refused.stderr).toMatch(message);
  });
});
