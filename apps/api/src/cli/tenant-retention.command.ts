import { SetLogRetention } from '@gatehouse/domain';
import { CliCommand, CommandArgs, JSON_OPTION, positiveInteger, printJson, tenantIdOption, usageError } from './command';

/**
 * `gatehouse tenant retention`: how long a tenant's audit logs are kept. The worker removes older ones behind a signed
 * retention anchor (docs/audit-trail.md, "Retention and its anchor"). Audited (a tenant update by the system).
 */
export const TENANT_RETENTION_COMMAND: CliCommand = {
  name: 'tenant retention',
  synopsis: '--tenant ID (--days N | --forever) [--json]',
  summary: "how many days the tenant's audit logs are kept (--forever: no period of its own; LOG_RETENTION_DAYS applies if set)",
  options: { tenant: { type: 'string' }, days: { type: 'string' }, forever: { type: 'boolean' }, ...JSON_OPTION },
  async run({ values }, context) {
    const tenantId = tenantIdOption(TENANT_RETENTION_COMMAND, values);
    const days = retentionDays(values);
    const setRetention = (await context()).app.get(SetLogRetention);
    await setRetention.execute(tenantId, days);
    if (values.json) return printJson({ tenant_id: tenantId, log_retention_days: days });
    return `tenant ${tenantId}: audit logs kept ${setRetention.describe(days)}${days === null && setRetention.defaultDays !== undefined ? ' (LOG_RETENTION_DAYS)' : ''}\n`;
  },
};

/** The period asked for (null: forever), checked as a command line; its bounds are the domain's to check. */
function retentionDays(values: CommandArgs['values']): number | null {
  if ((values.forever === true) === (values.days !== undefined)) throw usageError(TENANT_RETENTION_COMMAND, 'give either --days N or --forever');
  if (values.forever === true) return null;
  const days = positiveInteger(values.days);
  if (days === undefined) throw usageError(TENANT_RETENTION_COMMAND, '--days must be a positive whole number of days');
  return days;
}
