import { rotateGeneratedVaultKey } from '@gatehouse/config';
import { KeyWrapper } from '@gatehouse/domain';
import type { VaultRotation } from '@gatehouse/persistence';
import { CliCommand, CliUsageError, CommandContext, JSON_OPTION, printJson, tenantIdOption } from './command';

/** Progress goes to stderr as it happens (stdout keeps the result alone). */
const progress = (line: string) => process.stderr.write(`gatehouse: ${line}\n`);

/** Persistence (TypeORM) is loaded only when a command runs: `--help` and usage errors answer at once. */
async function rotation(context: CommandContext, retireAfterMs?: number): Promise<VaultRotation> {
  const { DatabaseVaultCrypto, VaultRotation } = await import('./open-database');
  return new VaultRotation(context.database.dataSource, context.app.get(DatabaseVaultCrypto), { retireAfterMs });
}

const status: CliCommand = {
  name: 'vault status',
  synopsis: '[--json]',
  summary: 'the current key-encryption key, how many vault keys each key-encryption key wraps, data keys and re-encryptions left',
  options: JSON_OPTION,
  async run({ values }, context) {
    const result = await (await rotation(await context())).status();
    if (values.json)
      return printJson({ kek_id: result.kekId, keys_by_kek: result.keysByKek, data_keys: result.dataKeys, tenants_re_encrypting: result.tenantsReEncrypting });
    const lines = [`key-encryption key: ${result.kekId}`, 'vault keys wrapped by:'];
    for (const [kek, n] of Object.entries(result.keysByKek))
      lines.push(`  ${kek}  ${n}${kek === result.kekId ? '  (current)' : '  (an older key: run gatehouse vault rotate-key)'}`);
    lines.push(`data keys: ${result.dataKeys.active} active, ${result.dataKeys.retired} retired`);
    lines.push(
      `tenants with a re-encryption to finish: ${result.tenantsReEncrypting}${result.tenantsReEncrypting ? ' (gatehouse vault re-encrypt --resume)' : ''}`,
    );
    return `${lines.join('\n')}\n`;
  },
};

const rotateKey: CliCommand = {
  name: 'vault rotate-key',
  synopsis: '[--json]',
  summary:
    're-wraps every vault key under the current key-encryption key (VAULT_KEY, the old one in VAULT_KEY_PREVIOUS); with a generated key, makes the new one first',
  options: JSON_OPTION,
  async run({ values }, context) {
    const opened = await context();
    const wrapper = opened.app.get(KeyWrapper);
    const vault = await rotation(opened);
    let introduced = false;
    if (isGenerated(opened) && (await nothingToRewrap(vault))) {
      // A new key first in DATA_DIR/vault-key, the old ones kept below it until nothing is wrapped by them.
      rotateGeneratedVaultKey(opened.config);
      if (wrapper instanceof (await import('./open-database')).LocalKeyWrapper) wrapper.reload();
      introduced = true;
    }
    const result = await vault.rewrapKeys(progress);
    if (values.json) return printJson({ kek_id: result.kekId, new_key_generated: introduced, rewrapped: result.rewrapped });
    if (!introduced && result.rewrapped === 0) {
      return (
        `every vault key is already wrapped by the current key-encryption key ${result.kekId}\n` +
        'to rotate: set VAULT_KEY to a new key (openssl rand -base64 32) and VAULT_KEY_PREVIOUS to the current one, restart the services, then run this again\n'
      );
    }
    const generated = introduced ? `a new key-encryption key ${result.kekId} was generated into ${opened.config.dataDir}; ` : '';
    return `${generated}${result.rewrapped} vault keys re-wrapped under ${result.kekId}\n`;
  },
};

const reEncrypt: CliCommand = {
  name: 'vault re-encrypt',
  synopsis: '[--tenant ID] [--resume] [--retire-after-seconds N] [--json]',
  summary:
    'moves every sealed value to a new data key of its tenant and retires the old keys once every service uses the new one (--resume: only finish an interrupted run)',
  options: { tenant: { type: 'string' }, resume: { type: 'boolean' }, 'retire-after-seconds': { type: 'string' }, ...JSON_OPTION },
  async run({ values }, context) {
    const tenantId = values.tenant === undefined ? undefined : tenantIdOption(reEncrypt, values);
    const retireAfter = values['retire-after-seconds'];
    if (retireAfter !== undefined && (typeof retireAfter !== 'string' || !/^\d{1,5}$/.test(retireAfter))) {
      throw new CliUsageError('vault re-encrypt: --retire-after-seconds must be a whole number of seconds');
    }
    const retireAfterMs = retireAfter === undefined ? undefined : Number(retireAfter) * 1000;
    const result = await (await rotation(await context(), retireAfterMs)).reEncrypt(progress, { tenantId, resume: values.resume === true });
    if (values.json) return printJson(result);
    return `re-encrypted ${result.tenants} tenants: ${result.resealed} values re-sealed, ${result.retired} data keys retired\n`;
  },
};

function isGenerated(context: CommandContext): boolean {
  return context.config.vaultKey === undefined && context.config.vaultKeyFile === undefined;
}

async function nothingToRewrap(vault: VaultRotation): Promise<boolean> {
  const { kekId, keysByKek } = await vault.status();
  return Object.keys(keysByKek).every((kek) => kek === kekId);
}

export const VAULT_COMMANDS: CliCommand[] = [status, rotateKey, reEncrypt];
