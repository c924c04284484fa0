import { Application } from './application';

/**
 * Arranges the deletion of an expiring application at its `expires_at`. Best effort by design: a periodic
 * sweep (ExpireApplications) deletes whatever a lost schedule missed.
 */
export abstract class ApplicationExpiryScheduler {
  abstract schedule(app: Pick<Application, 'id' | 'tenantId' | 'expiresAt'>): Promise<void>;
}

export class NoopApplicationExpiryScheduler extends ApplicationExpiryScheduler {
  async schedule(): Promise<void> {}
}
