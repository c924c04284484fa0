import { parseArgs } from 'node:util';
import { RateLimit, SetTenantRateLimit, UUID_PATTERN } from '@gatehouse/domain';
import { CliCommand, CliUsageError, CommandArgs } from './command';

const OPTIONS = {
  tenant: { type: 'string' },
  limit: { type: 'string' },
  'window-seconds': { type: 'string' },
  clear: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/**
 * `gatehouse tenant rate-limit`: the operator's tenant-wide default rate limit, for every application of the tenant
 * without one of its own. It is audited (a tenant update by the system) and every replica applies it from its next
 * request.
 */
export const TENANT_RATE_LIMIT_COMMAND: CliCommand = {
  name: 'tenant rate-limit',
  synopsis: '--tenant ID (--limit N --window-seconds W | --clear) [--json]',
  summary: "the tenant's default rate limit, for its applications without one of their own (--clear removes it)",
  options: OPTIONS,
  async run({ values }, context) {
    const parsed = checkTenantRateLimitArgs(values);
    if ('error' in parsed)
      throw new CliUsageError(`tenant rate-limit: ${parsed.error} (usage: gatehouse tenant rate-limit ${TENANT_RATE_LIMIT_COMMAND.synopsis})`);
    const { tenantId, limit, json } = parsed;
    await (await context()).app.get(SetTenantRateLimit).execute(tenantId, limit);
    const result = { tenant_id: tenantId, default_rate_limit: limit && { limit: limit.limit, window_seconds: limit.windowSeconds } };
    if (json) return `${JSON.stringify(result, null, 2)}\n`;
    return limit
      ? `tenant ${result.tenant_id}: default rate limit ${limit.limit} requests per ${limit.windowSeconds} s\n`
      : `tenant ${result.tenant_id}: default rate limit removed\n`;
  },
};

export type TenantRateLimitArgs = { tenantId: string; limit: RateLimit | null; json: boolean } | { error: string };

/** The command line of `tenant rate-limit`, checked; the limit's maxima are the domain's to check. */
export function parseTenantRateLimitArgs(args: string[]): TenantRateLimitArgs {
  try {
    return checkTenantRateLimitArgs(parseArgs({ args, strict: true, options: OPTIONS }).values);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function checkTenantRateLimitArgs(values: CommandArgs['values']): TenantRateLimitArgs {
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const tenantId = text('tenant');
  if (!tenantId || !UUID_PATTERN.test(tenantId)) return { error: '--tenant must be a tenant id (a UUID)' };
  const json = values.json === true;
  if (values.clear === true) {
    if (text('limit') !== undefined || text('window-seconds') !== undefined) return { error: '--clear takes no --limit or --window-seconds' };
    return { tenantId: tenantId.toLowerCase(), limit: null, json };
  }
  const count = positiveInteger(text('limit'));
  const window = positiveInteger(text('window-seconds'));
  if (count === undefined || window === undefined) return { error: '--limit and --window-seconds must both be positive integers (or give --clear)' };
  return { tenantId: tenantId.toLowerCase(), limit: { limit: count, windowSeconds: window }, json };
}

function positiveInteger(value: string | undefined): number | undefined {
  return value !== undefined && /^[1-9]\d{0,8}$/.test(value) ? Number(value) : undefined;
}
