import { parseArgs } from 'node:util';
import { RateLimit, SetTenantRateLimit, UUID_PATTERN } from '@gatehouse/domain';
import { createApiApp } from '../app';
import { loadConfigOrExit, openMigratedDatabase } from '../bootstrap';

export const TENANT_RATE_LIMIT_USAGE = `  gatehouse tenant rate-limit --tenant ID --limit N --window-seconds W [--json]
                                                 set the default rate limit of every application of the tenant
                                                 without one of its own
  gatehouse tenant rate-limit --tenant ID --clear [--json]
                                                 remove it (those applications are unlimited again)`;

/**
 * `gatehouse tenant rate-limit`: the operator's tenant-wide default rate limit. It is audited (a tenant update by the
 * system) and every replica applies it from its next request. Returns the exit code; 2 on bad usage.
 */
export async function tenantRateLimitCommand(args: string[]): Promise<number> {
  const parsed = parseTenantRateLimitArgs(args);
  if ('error' in parsed) {
    process.stderr.write(`gatehouse: ${parsed.error}\nusage:\n${TENANT_RATE_LIMIT_USAGE}\n`);
    return 2;
  }
  const { tenantId, limit, json } = parsed;
  const config = loadConfigOrExit();
  const database = await openMigratedDatabase(config);
  const app = await createApiApp({ config, database, runJobs: false, logger: false });
  try {
    await app.get(SetTenantRateLimit).execute(tenantId, limit);
  } finally {
    await app.close();
    await database.close();
  }
  const result = { tenant_id: tenantId, default_rate_limit: limit && { limit: limit.limit, window_seconds: limit.windowSeconds } };
  process.stdout.write(
    json
      ? `${JSON.stringify(result, null, 2)}\n`
      : limit
        ? `tenant ${result.tenant_id}: default rate limit ${limit.limit} requests per ${limit.windowSeconds} s\n`
        : `tenant ${result.tenant_id}: default rate limit removed\n`,
  );
  return 0;
}

export type TenantRateLimitArgs = { tenantId: string; limit: RateLimit | null; json: boolean } | { error: string };

/** The command line of `tenant rate-limit`, checked; the limit's maxima are the domain's to check. */
export function parseTenantRateLimitArgs(args: string[]): TenantRateLimitArgs {
  let values: { tenant?: string; limit?: string; 'window-seconds'?: string; clear?: boolean; json?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      options: { tenant: { type: 'string' }, limit: { type: 'string' }, 'window-seconds': { type: 'string' }, clear: { type: 'boolean' }, json: { type: 'boolean' } },
    }));
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  const tenantId = values.tenant;
  if (!tenantId || !UUID_PATTERN.test(tenantId)) return { error: '--tenant must be a tenant id (a UUID)' };
  const json = values.json === true;
  if (values.clear === true) {
    if (values.limit !== undefined || values['window-seconds'] !== undefined) return { error: '--clear takes no --limit or --window-seconds' };
    return { tenantId: tenantId.toLowerCase(), limit: null, json };
  }
  const count = positiveInteger(values.limit);
  const window = positiveInteger(values['window-seconds']);
  if (count === undefined || window === undefined) return { error: '--limit and --window-seconds must both be positive integers (or give --clear)' };
  return { tenantId: tenantId.toLowerCase(), limit: { limit: count, windowSeconds: window }, json };
}

function positiveInteger(value: string | undefined): number | undefined {
  return value !== undefined && /^[1-9]\d{0,8}$/.test(value) ? Number(value) : undefined;
}

