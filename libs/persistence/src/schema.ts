import { ApplicationEntity } from './entities/application.entity';
import { TenantEntity } from './entities/tenant.entity';
import { LogEntity } from './entities/log.entity';
import { AuditLogs1763700000300 } from './migrations/1763700000300-audit-logs';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema';
import { ProxyEntity } from './entities/proxy.entity';
import { Proxies1763730000000 } from './migrations/1763730000000-proxies';
import { RateLimits1764000100000 } from './migrations/1764000100000-rate-limits';
import { KeyRotationLastUse1764000110000 } from './migrations/1764000110000-key-rotation-last-use';
import { LogChain1764000200000 } from './migrations/1764000200000-log-chain';
import { UniqueTenantNames1764000400000 } from './migrations/1764000400000-unique-tenant-names';
import { LogChainAppend1764000513000 } from './migrations/1764000513000-log-chain-append';
import { LogChainAppendOwnOutbox1764000600000 } from './migrations/1764000600000-log-chain-append-own-outbox';
import { VaultKeys1764100000000 } from './migrations/1764100000000-vault-keys';
import { SealedProxies1764100100000 } from './migrations/1764100100000-sealed-proxies';
import { TokenEntity } from './entities/token.entity';
import { Tokens1764100200000 } from './migrations/1764100200000-tokens';
import { TokenMaskJson1764100300000 } from './migrations/1764100300000-token-mask-json';
import { LogRetention1764200000000 } from './migrations/1764200000000-log-retention';
import { LogRetentionPartitions1764200000001 } from './migrations/1764200000001-log-retention-partitions';
import { LogStreams1764300000000 } from './migrations/1764300000000-log-streams';
import { LogPartitions1764400000000 } from './migrations/1764400000000-log-partitions';

/** Every entity and migration of the service, listed explicitly so the same code runs from src and dist. */
export const ENTITIES = [TenantEntity, ApplicationEntity, ProxyEntity, LogEntity, TokenEntity];

export const MIGRATIONS = [
  InitialSchema1763700000000,
  Proxies1763730000000,
  AuditLogs1763700000300,
  RateLimits1764000100000,
  KeyRotationLastUse1764000110000,
  LogChain1764000200000,
  UniqueTenantNames1764000400000,
  LogChainAppend1764000513000,
  LogChainAppendOwnOutbox1764000600000,
  VaultKeys1764100000000,
  SealedProxies1764100100000,
  Tokens1764100200000,
  TokenMaskJson1764100300000,
  LogRetention1764200000000,
  LogRetentionPartitions1764200000001,
  LogStreams1764300000000,
  LogPartitions1764400000000,
];
