import { DynamicModule, Global, Logger, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  ApplicationRepository,
  AuditEventPublisher,
  Clock,
  SystemClock,
  TenantRepository,
  UnitOfWork,
} from '@gatehouse/domain';
import { Database } from './database';
import { TypeormApplicationRepository } from './repositories/typeorm-application.repository';
import { TypeormTenantRepository } from './repositories/typeorm-tenant.repository';
import { RepositoryRegistry, TypeormUnitOfWork } from './typeorm-unit-of-work';

export const DATABASE = Symbol('DATABASE');

/**
 * The repositories over an opened database, for both apps. The AuditEventPublisher the unit of work
 * needs is provided by whichever queue module the app imports.
 */
@Global()
@Module({})
export class PersistenceModule {
  static forRoot(database: Database): DynamicModule {
    const registry = new RepositoryRegistry()
      .register(ApplicationRepository, (em) => new TypeormApplicationRepository(em))
      .register(TenantRepository, (em) => new TypeormTenantRepository(em));
    return {
      module: PersistenceModule,
      providers: [
        { provide: DATABASE, useValue: database },
        { provide: DataSource, useValue: database.dataSource },
        { provide: RepositoryRegistry, useValue: registry },
        { provide: Clock, useClass: SystemClock },
        { provide: ApplicationRepository, useValue: registry.build(ApplicationRepository, database.dataSource.manager) },
        { provide: TenantRepository, useValue: registry.build(TenantRepository, database.dataSource.manager) },
        {
          provide: UnitOfWork,
          inject: [AuditEventPublisher, Clock],
          useFactory: (publisher: AuditEventPublisher, clock: Clock) => {
            const logger = new Logger('AuditPublisher');
            return new TypeormUnitOfWork(database.dataSource, registry, publisher, clock, (error) =>
              logger.warn(`audit events left in the outbox for the relay: ${String(error)}`),
            );
          },
        },
      ],
      exports: [DATABASE, DataSource, RepositoryRegistry, Clock, ApplicationRepository, TenantRepository, UnitOfWork],
    };
  }
}
