import { parseTenantRateLimitArgs } from './tenant-rate-limit.command';

const TENANT = '7D0F4A8E-1C2B-4D3E-9F60-123456789ABC';

describe('parseTenantRateLimitArgs', () => {
  it('reads a limit, or --clear', () => {
    expect(parseTenantRateLimitArgs(['--tenant', TENANT, '--limit', '100', '--window-seconds', '60'])).toEqual({
      tenantId: TENANT.toLowerCase(),
      limit: { limit: 100, windowSeconds: 60 },
      json: false,
    });
    expect(parseTenantRateLimitArgs(['--tenant', TENANT, '--clear', '--json'])).toEqual({ tenantId: TENANT.toLowerCase(), limit: null, json: true });
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
    [['--tenant', TENANT, 'stray'], /Unexpected argument 'stray'/],
  ])('refuses %j', (args, message) => {
    const parsed = parseTenantRateLimitArgs(args);
    expect(parsed).toEqual({ error: expect.stringMatching(message) });
  });
});
