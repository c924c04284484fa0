import { ApplicationEntity } from './entities/application.entity';
import { AuditOutboxEntity } from './entities/audit-outbox.entity';
import { TenantEntity } from './entities/tenant.entity';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema';

/** Every entity and migration of the service, listed explicitly so the same code runs from src and dist. */
export const ENTITIES = [TenantEntity, ApplicationEntity, AuditOutboxEntity];

export const MIGRATIONS = [InitialSchema1763700000000];
