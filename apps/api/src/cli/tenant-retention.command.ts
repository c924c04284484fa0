import { parseArgs } from 'node:util';
import { SetLogRetention, UUID_PATTERN } from '@gatehouse/domain';
import { CliCommand, CliUsageError, CommandArgs } from './command';

const OPTIONS = {
  tenant: { type: 'string' },
  days: { type: 'string' },
  forever: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/**
 * `gatehouse tenant retention`: how long a tenant's audit logs are kept. The worker removes older ones behind a signed
 * retention anchor (docs/audit-trail.md, "Retention and its anchor"). Audited (a tenant update by the system).
 */
export const TENANT_RETENTION_COMMAND: CliCommand = {
  name: 'tenant retention',
  synopsis: '--tenant ID (--days N | --forever) [--json]',
  summary: "how many days the tenant's audit logs are kept (--forever: no period of its own; LOG_RETENTION_DAYS applies if set)",
  options: OPTIONS,
  async run({ values }, context) {
    const parsed = checkTenantRetentionArgs(values);
    if ('error' in parsed)
      throw new CliUsageError(`tenant retention: ${parsed.error} (usage: gatehouse tenant retention ${TENANT_RETENTION_COMMAND.synopsis})`);
    const { tenantId, days, json } = parsed;
    const setRetention = (await context()).app.get(SetLogRetention);
    await setRetention.execute(tenantId, days);
    if (json) return `${JSON.stringify({ tenant_id: tenantId, log_retention_days: days }, null, 2)}\n`;
    return `tenant ${tenantId}: audit logs kept ${setRetention.describe(days)}${days === null && setRetention.defaultDays !== undefined ? ' (LOG_RETENTION_DAYS)' : ''}\n`;
  },
};

export type TenantRetentionArgs = { tenantId: string; days: number | null; json: boolean } | { error: string };

/** The command line of `tenant retention`, checked; the period's bounds are the domain's to check. */
export function parseTenantRetentionArgs(args: string[]): TenantRetentionArgs {
  try {
    return checkTenantRetentionArgs(parseArgs({ args, strict: true, options: OPTIONS }).values);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

function checkTenantRetentionArgs(values: CommandArgs['values']): TenantRetentionArgs {
  const tenantId = typeof values.tenant === 'string' ? values.tenant : undefined;
  if (!tenantId || !UUID_PATTERN.test(tenantId)) return { error: '--tenant must be a tenant id (a UUID)' };
  const json = values.json === true;
  const days = typeof values.days === 'string' ? values.days : undefined;
  if ((values.forever === true) === (days !== undefined)) return { error: 'give either --days N or --forever' };
  if (days === undefined) return { tenantId: tenantId.toLowerCase(), days: null, json };
  if (!/^[1-9]\d{0,8}$/.test(days)) return { error: '--days must be a positive whole number of days' };
  return { tenantId: tenantId.toLowerCase(), days: Number(days), json };
}
