import { Page, PageQuery } from '../shared/page';
import { Application } from './application';
import { ApplicationType } from './permissions';

export interface ApplicationFilter {
  ids?: string[];
  types?: ApplicationType[];
  /** Only applications whose key has not been used since this instant (never used included). */
  unusedSince?: Date;
}

export abstract class ApplicationRepository {
  abstract insert(app: Application): Promise<void>;
  /** Replaces the mutable fields; false when the row is gone. */
  abstract update(app: Application): Promise<boolean>;
  abstract delete(tenantId: string, id: string): Promise<boolean>;
  abstract findById(tenantId: string, id: string): Promise<Application | null>;
  /**
   * findById for a command that changes what it read: the row stays locked until the unit of work ends, so a
   * concurrent change cannot slip between a command's checks and its write.
   */
  abstract findByIdForChange(tenantId: string, id: string): Promise<Application | null>;
  /** The application whose key, or whose previous key (see RegenerateApplicationKey), has this hash. */
  abstract findByKeyHash(keyHash: string): Promise<Application | null>;
  /**
   * What findByKeyHash would answer from memory, unverified (it may have been revoked since): only for work that may be
   * started early and thrown away, never to authenticate. Undefined: nothing in memory (a repository without a cache).
   */
  cachedByKeyHash(keyHash: string): Application | undefined {
    void keyHash;
    return undefined;
  }
  abstract list(tenantId: string, filter: ApplicationFilter, page: PageQuery): Promise<Page<Application>>;
  /** Expiring applications whose `expires_at` has passed, oldest first. */
  abstract findExpired(now: Date, limit: number): Promise<Application[]>;
}
