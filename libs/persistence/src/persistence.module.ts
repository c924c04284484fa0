import { DynamicModule, Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  ApplicationRepository,
  AuditEventPublisher,
  Clock,
  KeyWrapper,
  LogChainWriter,
  LogCheckpointRepository,
  LogPartitions,
  LogRetentionRepository,
  LogRepository,
  LogStreamRepository,
  ProxyRepository,
  SystemClock,
  TenantRepository,
  TokenRepository,
  UnitOfWork,
  VaultCrypto,
} from '@gatehouse/domain';
import { APPLICATION_MAX_AGE_MS, CachedApplicationRepository, VersionBumpingCommitObserver } from './cache/cached-application.repository';
import { InMemoryVersionStore, RedisVersionStore, VersionScopedStore, VersionStore } from './cache/version-store';
import { CachedProxyRepository, PROXY_MAX_AGE_MS } from './cache/cached-proxy.repository';
import { Database } from './database';
import { TypeormApplicationRepository } from './repositories/typeorm-application.repository';
import { TypeormTenantRepository } from './repositories/typeorm-tenant.repository';
import { TypeormProxyRepository } from './repositories/typeorm-proxy.repository';
import { TypeormLogCheckpointRepository } from './repositories/typeorm-log-checkpoint.repository';
import { TypeormLogChainWriter } from './repositories/typeorm-log-chain-writer';
import { TypeormLogRetentionRepository } from './repositories/typeorm-log-retention.repository';
import { TypeormLogRepository } from './repositories/typeorm-log.repository';
import { TypeormLogStreamRepository } from './repositories/typeorm-log-stream.repository';
import { TOKEN_BATCH_INSERT, TypeormTokenRepository } from './repositories/typeorm-token.repository';
import { TypeormLogPartitions } from './log-partitions/typeorm-log-partitions';
import { CachedTokenRepository } from './cache/cached-token.repository';
import { RepositoryRegistry, TypeormUnitOfWork } from './typeorm-unit-of-work';
import { DatabaseVaultCrypto } from './vault/database-vault-crypto';
import { VaultKeyStore } from './vault/vault-key-store';

export const DATABASE = Symbol('DATABASE');

export interface PersistenceOptions {
  /** Shared cache-version counters for several replicas; without it the counters are local to the process. */
  redisUrl?: string;
  /** The module that provides the AuditEventPublisher the unit of work publishes committed events through. */
  publisher: DynamicModule;
  /** The key-encryption key of the vault (LocalKeyWrapper over VAULT_KEY, or a KMS). */
  keyWrapper: KeyWrapper;
}

/**
 * The repositories over an opened database, for both apps. The AuditEventPublisher comes from the module in
 * `options.publisher` (the queue's JobQueueModule), imported explicitly: persistence never imports the queue.
 */
@Global()
@Module({})
export class PersistenceModule implements OnApplicationShutdown {
  constructor(@Inject(VersionStore) private readonly versions: VersionStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.versions.close();
  }

  static forRoot(database: Database, options: PersistenceOptions): DynamicModule {
    const versionLogger = new Logger('CacheVersions');
    // Read once per request (a request that opened a scope, inVersionScope), however many cached reads it makes.
    const versions: VersionStore = new VersionScopedStore(
      options.redisUrl
        ? new RedisVersionStore(options.redisUrl, (error) =>
            versionLogger.error(
              `could not publish a cache invalidation; replicas may serve a stale entry for up to ${Math.max(APPLICATION_MAX_AGE_MS, PROXY_MAX_AGE_MS) / 1000} s: ${String(error)}`,
            ),
          )
        : new InMemoryVersionStore(),
    );
    // One key store per process: its unwrapped keys are shared by every request and transaction.
    const vault = new DatabaseVaultCrypto(new VaultKeyStore(database.dataSource, options.keyWrapper));
    const registry = new RepositoryRegistry()
      .register(ApplicationRepository, (em) => new TypeormApplicationRepository(em))
      .register(TenantRepository, (em) => new TypeormTenantRepository(em))
      .register(ProxyRepository, (em) => new TypeormProxyRepository(em, vault))
      .register(LogRepository, (em) => new TypeormLogRepository(em))
      .register(LogChainWriter, (em) => new TypeormLogChainWriter(em))
      .register(LogCheckpointRepository, (em) => new TypeormLogCheckpointRepository(em))
      .register(LogRetentionRepository, (em) => new TypeormLogRetentionRepository(em))
      .register(LogPartitions, (em) => new TypeormLogPartitions(em))
      .register(TokenRepository, (em) => new TypeormTokenRepository(em))
      .registerBatchInsert(TokenRepository, TOKEN_BATCH_INSERT)
      .register(LogStreamRepository, (em) => new TypeormLogStreamRepository(em, vault));
    return {
      module: PersistenceModule,
      imports: [options.publisher],
      providers: [
        { provide: DATABASE, useValue: database },
        { provide: DataSource, useValue: database.dataSource },
        { provide: RepositoryRegistry, useValue: registry },
        { provide: Clock, useClass: SystemClock },
        { provide: KeyWrapper, useValue: options.keyWrapper },
        { provide: VaultCrypto, useValue: vault },
        { provide: DatabaseVaultCrypto, useValue: vault },
        { provide: VersionStore, useValue: versions },
        {
          provide: ApplicationRepository,
          useValue: new CachedApplicationRepository(registry.build(ApplicationRepository, database.dataSource.manager), versions),
        },
        { provide: TenantRepository, useValue: registry.build(TenantRepository, database.dataSource.manager) },
        { provide: ProxyRepository, useValue: new CachedProxyRepository(registry.build(ProxyRepository, database.dataSource.manager), versions) },
        { provide: LogRepository, useValue: registry.build(LogRepository, database.dataSource.manager) },
        // One writer per process: its known heads let a tenant's next batch take the one-statement path.
        { provide: LogChainWriter, useValue: registry.build(LogChainWriter, database.dataSource.manager) },
        { provide: LogCheckpointRepository, useValue: registry.build(LogCheckpointRepository, database.dataSource.manager) },
        { provide: LogPartitions, useValue: registry.build(LogPartitions, database.dataSource.manager) },
        { provide: LogRetentionRepository, useValue: registry.build(LogRetentionRepository, database.dataSource.manager) },
        { provide: TokenRepository, useValue: new CachedTokenRepository(registry.build(TokenRepository, database.dataSource.manager), versions) },
        { provide: LogStreamRepository, useValue: registry.build(LogStreamRepository, database.dataSource.manager) },
        {
          provide: UnitOfWork,
          inject: [AuditEventPublisher, Clock],
          useFactory: (publisher: AuditEventPublisher, clock: Clock) => {
            const logger = new Logger('AuditPublisher');
            return new TypeormUnitOfWork(
              database.dataSource,
              registry,
              publisher,
              clock,
              (error) => logger.warn(`audit events left in the outbox for the relay: ${String(error)}`),
              [new VersionBumpingCommitObserver(versions)],
            );
          },
        },
      ],
      exports: [
        DATABASE,
        DataSource,
        VersionStore,
        RepositoryRegistry,
        Clock,
        KeyWrapper,
        VaultCrypto,
        DatabaseVaultCrypto,
        ApplicationRepository,
        TenantRepository,
        UnitOfWork,
        ProxyRepository,
        LogRepository,
        LogChainWriter,
        LogCheckpointRepository,
        LogRetentionRepository,
        LogPartitions,
        TokenRepository,
        LogStreamRepository,
      ],
    };
  }
}
