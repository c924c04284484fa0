import { LOGS_VERIFY_COMMAND } from '../logs/logs-verify.command';
import { CliCommand } from './command';
import { CONFIG_COMMANDS } from './config-as-code/config.commands';
import { MIGRATE_CHECK_COMMAND, MIGRATE_COMMAND, MIGRATE_STATUS_COMMAND } from './migrate.command';
import { OPENAPI_COMMAND } from './openapi.command';
import { TENANT_COMMANDS } from './tenant.commands';
import { TENANT_RATE_LIMIT_COMMAND } from './tenant-rate-limit.command';
import { TENANT_RETENTION_COMMAND } from './tenant-retention.command';
import { VAULT_COMMANDS } from './vault.commands';

/**
 * Every `gatehouse` command, in the order `--help` lists them. A new command: a file of its own, one entry here. A
 * command whose name starts another's (`migrate status`, `migrate`) comes first: the first whose words match runs.
 */
export const COMMANDS: CliCommand[] = [
  ...TENANT_COMMANDS,
  TENANT_RATE_LIMIT_COMMAND,
  TENANT_RETENTION_COMMAND,
  LOGS_VERIFY_COMMAND,
  ...VAULT_COMMANDS,
  MIGRATE_STATUS_COMMAND,
  MIGRATE_CHECK_COMMAND,
  MIGRATE_COMMAND,
  ...CONFIG_COMMANDS,
  OPENAPI_COMMAND,
];
