import { randomUUID } from 'node:crypto';
import { AuditEvent, CreatedTenant, LogChainWriter } from '@gatehouse/domain';
import { ServiceProcess } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { ConsoleBrowser, startConsoleService } from './browser';

jest.setTimeout(180_000);

export const SEEDED = 130;
export const BASE = Date.UTC(2026, 2, 1);

/** Seeded logs, one a minute: cards and tokens alternating, entity ids e0..e4. */
export function seedLogs(tenantId: string): AuditEvent[] {
  return Array.from({ length: SEEDED }, (_, i) => ({
    id: randomUUID(),
    tenantId,
    actorId: i % 2 === 0 ? randomUUID() : null,
    actorType: i % 2 === 0 ? ('application' as const) : ('system' as const),
    entityType: i % 2 === 0 ? 'card' : 'token',
    entityId: `e${i % 5}`,
    operation: 'update' as const,
    message: `Seeded change ${i}`,
    createdAt: new Date(BASE + i * 60_000),
  }));
}

/** The built service with a tenant and its seeded logs, and Debian's chromium on its console, for console*.test.ts of one concern each. */
export function useConsole() {
  let service: ServiceProcess;
  let browser: ConsoleBrowser;
  let tenant: CreatedTenant;
  let logs: AuditEvent[];

  beforeAll(async () => {
    const admin = await startTestApp();
    try {
      tenant = await admin.tenant();
      logs = seedLogs(tenant.tenant.id);
      await admin.app.get(LogChainWriter).append(logs);
    } finally {
      await admin.close();
    }
    // Checkpoints every second (the least allowed), so the integrity panel has one to show soon.
    service = await startConsoleService({ LOG_CHECKPOINT_INTERVAL_MS: '1000' });
    browser = await ConsoleBrowser.launch(service.consoleUrl!);
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });
  return {
    get service() {
      return service;
    },
    get browser() {
      return browser;
    },
    get tenant() {
      return tenant;
    },
    get logs() {
      return logs;
    },
  };
}
