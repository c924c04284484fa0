import { randomUUID } from 'node:crypto';
import { createServer, RequestListener, Server } from 'node:http';
import { AddressInfo } from 'node:net';
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

// The CSP reporter runs in the browser; this program has no DOM types.
declare const document: any;

/** A call to the service's API with `key` (a PATCH as a merge patch): the status and the JSON answered (undefined for an empty body). */
export type ApiCall = (key: string, method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>;

export interface ConsoleOptions {
  /** Seed the tenant's trail with SEEDED logs (`seedLogs`). */
  seedLogs?: boolean;
  /** The service's environment beyond the tests' own. */
  env?: Record<string, string>;
  /** Report every CSP violation as a console error (an init script runs whatever the page's CSP says). */
  reportCsp?: boolean;
}

/** What the logs pages want: seeded logs, and checkpoints every second (the least allowed), so the integrity panel has one to show soon. */
const SEEDED_LOGS: ConsoleOptions = { seedLogs: true, env: { LOG_CHECKPOINT_INTERVAL_MS: '1000' } };

/** The service's environment that lets a proxy or a log stream reach a plain-http server on loopback. */
export const LOOPBACK_ALLOWED = { PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' };

/** The built service with a tenant (and its seeded logs unless told), and Debian's chromium on its console, for console*.test.ts of one concern each. */
export function useConsole(options: ConsoleOptions = SEEDED_LOGS) {
  let service: ServiceProcess;
  let browser: ConsoleBrowser;
  let tenant: CreatedTenant;
  let logs: AuditEvent[] = [];

  beforeAll(async () => {
    const admin = await startTestApp();
    try {
      tenant = await admin.tenant();
      if (options.seedLogs) {
        logs = seedLogs(tenant.tenant.id);
        await admin.app.get(LogChainWriter).append(logs);
      }
    } finally {
      await admin.close();
    }
    service = await startConsoleService(options.env);
    browser = await ConsoleBrowser.launch(service.consoleUrl!);
    if (options.reportCsp) {
      await browser.context.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (e: any) => {
          console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sample})`);
        });
      });
    }
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  const api: ApiCall = async (key, method, path, body) => {
    const res = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { 'SVC-API-KEY': key, ...(body ? { 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };
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
    api,
  };
}

/** A plain-http server on loopback for one describe, serving `handler`; `url` is its address with `path`, once started. */
export function useLoopbackServer(handler: RequestListener, path: string): { readonly url: string } {
  let server: Server | undefined;
  let url = '';
  beforeAll(async () => {
    const started = createServer(handler);
    server = started;
    await new Promise<void>((resolve) => started.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(started.address() as AddressInfo).port}${path}`;
  });
  afterAll(() => new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined))));
  return {
    get url() {
      return url;
    },
  };
}
