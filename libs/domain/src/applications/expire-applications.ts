import { SYSTEM_ACTOR } from '../audit/audit-event';
import { Clock } from '../shared/clock';
import { UnitOfWork } from '../shared/unit-of-work';
import { deleteApplication } from './application-commands';
import { ApplicationRepository } from './application.repository';

/**
 * Deletes expiring applications whose time has come, each logged as a delete by the system. Safe to run
 * from several workers at once and more than once per application: a second delete finds nothing and
 * records nothing.
 */
export class ExpireApplications {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly applications: ApplicationRepository,
    private readonly clock: Clock,
  ) {}

  /** The scheduled job for one application; early or stale jobs (regenerated, deleted) do nothing. */
  async expireOne(tenantId: string, id: string): Promise<boolean> {
    const app = await this.applications.findById(tenantId, id);
    if (!app?.expiresAt || app.expiresAt.getTime() > this.clock.now().getTime()) return false;
    return deleteApplication(this.uow, tenantId, id, SYSTEM_ACTOR, 'expired');
  }

  /** The periodic sweep: everything already past `expires_at`, in batches. Returns how many it deleted. */
  async sweep(batchSize = 500): Promise<number> {
    let deleted = 0;
    for (;;) {
      const due = await this.applications.findExpired(this.clock.now(), batchSize);
      for (const app of due) {
        if (await deleteApplication(this.uow, app.tenantId, app.id, SYSTEM_ACTOR, 'expired')) deleted++;
      }
      if (due.length < batchSize) return deleted;
    }
  }
}
