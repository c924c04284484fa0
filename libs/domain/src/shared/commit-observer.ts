import { AuditEvent } from '../logs/log';

/**
 * Told which entities a transaction changed, after it committed and before the writer answers: caches invalidate
 * here, so the first request after a response (on any replica) sees the change.
 */
export abstract class CommitObserver {
  abstract committed(events: AuditEvent[]): Promise<void>;
}
