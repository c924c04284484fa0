import { RateLimit, SetTenantRateLimit } from '@gatehouse/domain';
import { CliCommand, CommandArgs, JSON_OPTION, positiveInteger, printJson, tenantIdOption, usageError } from './command';

/**
 * `gatehouse tenant rate-limit`: the operator's tenant-wide default rate limit, for every application of the tenant
 * without one of its own. It is audited (a tenant update by the system) and every replica applies it from its next
 * request.
 */
export const TENANT_RATE_LIMIT_COMMAND: CliCommand = {
  name: 'tenant rate-limit',
  synopsis: '--tenant ID (--limit N --window-seconds W | --clear) [--json]',
  summary: "the tenant's default rate limit, for its applications without one of their own (--clear removes it)",
  options: { tenant: { type: 'string' }, limit: { type: 'string' }, 'window-seconds': { type: 'string' }, clear: { type: 'boolean' }, ...JSON_OPTION },
  async run({ values }, context) {
    const tenantId = tenantIdOption(TENANT_RATE_LIMIT_COMMAND, values);
    const limit = rateLimit(values);
    await (await context()).app.get(SetTenantRateLimit).execute(tenantId, limit);
    if (values.json) return printJson({ tenant_id: tenantId, default_rate_limit: limit && { limit: limit.limit, window_seconds: limit.windowSeconds } });
    return limit
      ? `tenant ${tenantId}: default rate limit ${limit.limit} requests per ${limit.windowSeconds} s\n`
      : `tenant ${tenantId}: default rate limit removed\n`;
  },
};

/** The limit asked for (null: --clear), checked as a command line; its maxima are the domain's to check. */
function rateLimit(values: CommandArgs['values']): RateLimit | null {
  if (values.clear === true) {
    if (values.limit !== undefined || values['window-seconds'] !== undefined)
      throw usageError(TENANT_RATE_LIMIT_COMMAND, '--clear takes no --limit or --window-seconds');
    return null;
  }
  const count = positiveInteger(values.limit);
  const window = positiveInteger(values['window-seconds']);
  if (count === undefined || window === undefined)
    throw usageError(TENANT_RATE_LIMIT_COMMAND, '--limit and --window-seconds must both be positive integers (or give --clear)');
  return { limit: count, windowSeconds: window };
}
