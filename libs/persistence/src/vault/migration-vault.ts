import { QueryRunner } from 'typeorm';
import { loadConfig, resolveVaultKeys } from '@gatehouse/config';
import { KeyWrapper } from '@gatehouse/domain';
import { ambientTransaction } from '../typeorm-unit-of-work';
import { DatabaseVaultCrypto } from './database-vault-crypto';
import { LocalKeyWrapper } from './local-key-wrapper';
import { VaultKeyStore } from './vault-key-store';

export interface MigrationVaultOptions {
  /** The vault's key-encryption key; by default the environment's (VAULT_KEY...), as the service and the CLI read it. */
  keyWrapper?: KeyWrapper;
  /** Where a migration that seals or opens rows reports its batches; by default one line each on stderr. */
  progress?: (line: string) => void;
}

let current: MigrationVaultOptions = {};

/** Runs `work` with these options in force for the migrations it runs (runMigrations). */
export async function withMigrationVaultOptions<T>(options: MigrationVaultOptions, work: () => Promise<T>): Promise<T> {
  const previous = current;
  current = options;
  try {
    return await work();
  } finally {
    current = previous;
  }
}

/**
 * For a migration that converts rows between plaintext and sealed: a vault whose keys are read and made inside the
 * migration's own transaction (the embedded database has one connection), and the progress reporter.
 */
export async function inMigrationVault<T>(q: QueryRunner, work: (vault: DatabaseVaultCrypto, progress: (line: string) => void) => Promise<T>): Promise<T> {
  const wrapper = current.keyWrapper ?? new LocalKeyWrapper(() => resolveVaultKeys(loadConfig()));
  const vault = new DatabaseVaultCrypto(new VaultKeyStore(q.connection, wrapper));
  const progress = current.progress ?? ((line: string) => process.stderr.write(`gatehouse: ${line}\n`));
  return ambientTransaction.run(q.manager, () => work(vault, progress));
}
