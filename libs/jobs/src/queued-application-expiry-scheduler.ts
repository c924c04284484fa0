import { Logger } from '@nestjs/common';
import { Application, ApplicationExpiryScheduler, Clock } from '@gatehouse/domain';
import { JobQueue } from './job-queue';
import { expiryJobId, JobName } from './jobs';

/**
 * A delayed `expire-application` job per expiring application, keyed `expire-<id>`. Not awaited by the
 * request: a lost or refused job is caught by the periodic sweep, and the key stops working at
 * `expires_at` whatever happens (AuthenticateApiKey).
 */
export class QueuedApplicationExpiryScheduler extends ApplicationExpiryScheduler {
  private readonly logger = new Logger('ApplicationExpiryScheduler');
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly queue: JobQueue,
    private readonly clock: Clock,
  ) {
    super();
  }

  async schedule(app: Pick<Application, 'id' | 'tenantId' | 'expiresAt'>): Promise<void> {
    if (!app.expiresAt) return;
    const delayMs = Math.max(0, app.expiresAt.getTime() - this.clock.now().getTime());
    const added: Promise<void> = this.queue
      .add(JobName.ExpireApplication, { tenant_id: app.tenantId, application_id: app.id }, { jobId: expiryJobId(app.id), delayMs })
      .catch((error: unknown) => this.logger.warn(`expiry of application ${app.id} left to the sweep: ${String(error)}`))
      .finally(() => this.pending.delete(added));
    this.pending.add(added);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
