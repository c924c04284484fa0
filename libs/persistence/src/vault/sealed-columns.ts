import { tokenAad } from '@gatehouse/domain';

/**
 * A column that holds values sealed by the vault (VaultCrypto.seal), for `gatehouse vault re-encrypt`, which moves them
 * to their tenant's newest data key in bounded batches. The aad must be built exactly as the writer builds it.
 */
export interface SealedColumn {
  table: string;
  /** The columns that name one row (its primary key). */
  keyColumns: string[];
  /** The column holding the row's tenant id (the tenant whose data key sealed the value). */
  tenantColumn: string;
  /** The bytea column of sealed values (NULL: nothing sealed). */
  column: string;
  /** The aad the value was sealed with, from the row's tenant and key columns (as selected, by column name). */
  aad(row: Record<string, unknown>): string;
}

export const proxyKeyAad = (tenantId: string, id: string): string => `proxy-key:${tenantId}:${id}`;
export const proxyConfigurationAad = (tenantId: string, id: string): string => `proxy-configuration:${tenantId}:${id}`;
export const logStreamSecretsAad = (tenantId: string, id: string): string => `log-stream-secrets:${tenantId}:${id}`;

/** Every sealed column of the schema. A feature that seals a column adds one entry here. */
export const SEALED_COLUMNS: SealedColumn[] = [
  { table: 'proxies', keyColumns: ['id'], tenantColumn: 'tenant_id', column: 'key_sealed', aad: (r) => proxyKeyAad(String(r.tenant_id), String(r.id)) },
  {
    table: 'proxies',
    keyColumns: ['id'],
    tenantColumn: 'tenant_id',
    column: 'configuration_sealed',
    aad: (r) => proxyConfigurationAad(String(r.tenant_id), String(r.id)),
  },
  {
    table: 'log_streams',
    keyColumns: ['id'],
    tenantColumn: 'tenant_id',
    column: 'secrets_sealed',
    aad: (r) => logStreamSecretsAad(String(r.tenant_id), String(r.id)),
  },
  { table: 'tokens', keyColumns: ['tenant_id', 'id'], tenantColumn: 'tenant_id', column: 'sealed', aad: (r) => tokenAad(String(r.tenant_id), String(r.id)) },
];
