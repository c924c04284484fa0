import { ExpireApplications, UUID_PATTERN } from '@gatehouse/domain';
import { InvalidJobError, JobHandler } from '../job-handler';
import { JobData, JobName } from '../jobs';

/**
 * The delayed job of one expiring application. A job for an application already deleted, or whose
 * time has not come, does nothing (ExpireApplications.expireOne); the periodic sweep is the safety net.
 */
export class ExpireApplicationHandler extends JobHandler<JobName.ExpireApplication> {
  readonly job = JobName.ExpireApplication;

  constructor(private readonly expire: ExpireApplications) {
    super();
  }

  async handle(data: JobData[JobName.ExpireApplication]): Promise<void> {
    const { tenant_id: tenantId, application_id: applicationId } = data ?? {};
    if (typeof tenantId !== 'string' || !UUID_PATTERN.test(tenantId) || typeof applicationId !== 'string' || !UUID_PATTERN.test(applicationId)) {
      throw new InvalidJobError(`invalid ${JobName.ExpireApplication} payload: tenant_id and application_id must be UUIDs`);
    }
    await this.expire.expireOne(tenantId.toLowerCase(), applicationId.toLowerCase());
  }
}
