import { CreatedTenant, CreateTenant, TenantRepository } from '@gatehouse/domain';
import { INestApplicationContext } from '@nestjs/common';

// Shared with the worker, which may not import this app.
export { loadConfigOrExit, openMigratedDatabase } from '@gatehouse/runtime';

/**
 * On an empty database, the tenant `default` and its first management application (CONTRACT.md section 9), whose key
 * is `suppliedKey` when the operator gave one (BOOTSTRAP_MANAGEMENT_KEY_FILE): only its hash is stored.
 */
export async function ensureFirstTenant(app: INestApplicationContext, suppliedKey?: string): Promise<CreatedTenant | undefined> {
  if ((await app.get(TenantRepository).count()) > 0) return undefined;
  try {
    return await app.get(CreateTenant).execute('default', suppliedKey);
  } catch (error) {
    // Another replica starting at the same moment created it first.
    if ((error as { code?: string }).code === 'conflict') return undefined;
    throw error;
  }
}

export function firstKeyBanner(created: CreatedTenant, port: number, consoleUrl?: string): string {
  return [
    '',
    '================================================================',
    ` Tenant 'default' created (${created.tenant.id}).`,
    ' Its management API key, shown once, is:',
    '',
    `   ${created.key}`,
    '',
    ' Send it as the SVC-API-KEY header, e.g.:',
    `   curl -H 'SVC-API-KEY: ${created.key}' http://localhost:${port}/applications`,
    ...(consoleUrl ? ['', ` or paste it into the console: ${consoleUrl}`] : []),
    '================================================================',
    '',
  ].join('\n');
}
