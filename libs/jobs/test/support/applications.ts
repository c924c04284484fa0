import { randomUUID } from 'node:crypto';
import { Application, insertApplication, newApplicationRecord, UnitOfWork } from '@gatehouse/domain';
import type { JobsHost } from '@gatehouse/test-support/jobs-host';

/** A committed expiring application (and its tenant's id), as CreateApplication leaves one. */
export async function insertExpiringApplication(host: JobsHost, expiresInMs: number): Promise<Application> {
  const now = new Date();
  const application = newApplicationRecord({
    id: randomUUID(),
    tenantId: randomUUID(),
    name: 'short-lived',
    type: 'expiring',
    permissions: [],
    rules: [{ priority: 1, transform: 'reveal', permissions: ['token:read'], conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }] }],
    keyHash: randomUUID().replace(/-/g, '').padEnd(64, '0'),
    createdAt: now,
    expiresAt: new Date(now.getTime() + expiresInMs),
  });
  await host.database.dataSource.query('INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, now())', [
    application.tenantId,
    `expiry-${application.tenantId}`,
  ]);
  await insertApplication(host.context.get(UnitOfWork), application, { id: null, type: 'system' });
  return application;
}

export async function applicationExists(host: JobsHost, id: string): Promise<boolean> {
  const [row] = await host.database.dataSource.query('SELECT count(*)::int AS n FROM applications WHERE id = $1', [id]);
  return row.n === 1;
}

export async function logsOf(host: JobsHost, tenantId: string): Promise<{ operation: string; actor_type: string; actor_id: string | null; message: string }[]> {
  return host.database.dataSource.query('SELECT operation, actor_type, actor_id, message FROM logs WHERE tenant_id = $1 ORDER BY created_at, id', [tenantId]);
}
