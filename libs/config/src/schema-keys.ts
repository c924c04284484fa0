import { parseSigningKey } from './log-signing-key';
import { parseVaultKey, parseVaultKeyList } from './vault-key';
import { publicKeyList, secret, text, variable } from './variable-kinds';

/** How Gatehouse generates keys (`key_` and 40 base62 characters): a supplied bootstrap key must look the same. */
const GENERATED_KEY = /^key_[0-9A-Za-z]{40}$/;

/** The keys and secrets group of the configuration (schema.ts lists every variable; these are its vault, signing and bootstrap keys). */
export const KEY_VARIABLES = [
  variable({
    name: 'VAULT_KEY',
    key: 'vaultKey',
    group: 'keys',
    readBy: 'both',
    kind: secret(parseVaultKey, 'must be a 32-byte key as base64 or hex (openssl rand -base64 32)'),
    secret: true,
    meaning:
      "the vault's key-encryption key (wraps the per-tenant data keys that seal tokens, proxy configurations and proxy keys): 32 bytes as base64 or hex; never logged. **Back it up: nothing sealed can be read without it** ([key management](docs/tokens.md#key-management))",
  }),
  variable({
    name: 'VAULT_KEY_FILE',
    key: 'vaultKeyFile',
    group: 'keys',
    readBy: 'both',
    kind: text(),
    example: '/run/secrets/vault-key',
    meaning:
      'the same, read from a file (give one of the two); with neither, a key is generated into `DATA_DIR/vault-key` on first use (give every replica the same key instead)',
  }),
  variable({
    name: 'VAULT_KEY_PREVIOUS',
    key: 'vaultKeyPrevious',
    group: 'keys',
    readBy: 'both',
    kind: secret(parseVaultKeyList, 'must be one or more 32-byte keys as base64 or hex, separated by commas'),
    secret: true,
    meaning: 'during a rotation, the previous key(s), comma-separated: they unwrap, never wrap (`gatehouse vault rotate-key`)',
  }),
  variable({
    name: 'VAULT_KEY_PREVIOUS_FILE',
    key: 'vaultKeyPreviousFile',
    group: 'keys',
    readBy: 'both',
    kind: text(),
    example: '/run/secrets/vault-key-previous',
    meaning: 'the same, read from a file (one key per line)',
  }),
  variable({
    name: 'LOG_SIGNING_KEY',
    key: 'logSigningKey',
    group: 'keys',
    readBy: 'worker',
    kind: secret(parseSigningKey, 'must be an Ed25519 private key: PKCS#8 PEM, or the 32-byte seed as base64 or hex'),
    secret: true,
    meaning:
      'the Ed25519 private key that signs log checkpoints: PKCS#8 PEM, or the 32-byte seed as base64 or hex (see [verifying the audit trail](docs/audit-trail.md#verifying-the-audit-trail)); never logged',
  }),
  variable({
    name: 'LOG_SIGNING_KEY_FILE',
    key: 'logSigningKeyFile',
    group: 'keys',
    readBy: 'worker',
    kind: text(),
    example: '/run/secrets/log-signing-key.pem',
    meaning: 'the same, read from a file (give one of the two); with neither, a key is generated into `DATA_DIR/log-signing-key.pem` on first use',
  }),
  variable({
    name: 'LOG_SIGNING_RETIRED_KEYS',
    key: 'logSigningRetiredKeys',
    group: 'keys',
    readBy: 'both',
    kind: publicKeyList(),
    example: 'QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=',
    meaning:
      'the public keys (32 raw bytes as base64 or hex, comma-separated) of signing keys rotated out: `GET /logs/public-keys` lists them as retired, and `gatehouse logs verify` accepts the checkpoints and retention anchors they signed ([key rotation](docs/audit-trail.md#key-rotation))',
  }),
  variable({
    name: 'BOOTSTRAP_MANAGEMENT_KEY',
    key: 'bootstrapManagementKey',
    group: 'keys',
    readBy: 'api',
    kind: secret(
      (key) => {
        if (!GENERATED_KEY.test(key)) throw new Error('not a generated key');
      },
      'must hold a key as Gatehouse generates them: key_ and 40 letters or digits',
      'BOOTSTRAP_MANAGEMENT_KEY(_FILE)',
    ),
    secret: true,
    fromFile: true,
    shownDefault: 'unset: generated and shown once on stderr',
    meaning:
      "the first tenant's management key (`key_` and 40 letters or digits, as generated ones), used when the api creates tenant `default` on an empty database: stored only as its hash, never printed; ignored once a tenant exists",
  }),
];
