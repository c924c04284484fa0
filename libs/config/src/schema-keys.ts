import { parseSigningKey } from './log-signing-key';
import { parseVaultKey, parseVaultKeyList } from './vault-key';
import { boolean, integer, oneOf, publicKeyList, secret, text, variable } from './variable-kinds';

export const LOG_PARTITION_INTERVALS = ['day', 'week', 'month'] as const;

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
    name: 'LOG_RETENTION_INTERVAL_MS',
    key: 'logRetentionIntervalMs',
    group: 'keys',
    readBy: 'worker',
    kind: integer(10_000, 86_400_000, 600_000),
    meaning:
      "how often the worker removes the logs older than their tenant's retention period, in bounded batches behind a signed retention anchor ([retention](docs/audit-trail.md#retention-and-its-anchor))",
  }),
  variable({
    name: 'LOG_RETENTION_DAYS',
    key: 'logRetentionDays',
    group: 'keys',
    readBy: 'both',
    kind: integer(1, 36_500),
    example: '365',
    meaning:
      'the retention period (days) of every tenant without one of its own (unset: kept forever); the worker drops whole log partitions older than every retention that applies to their logs, behind signed retention anchors ([retention](docs/audit-trail.md#retention-and-its-anchor))',
  }),
  variable({
    name: 'LOG_CHECKPOINT_INTERVAL_MS',
    key: 'logCheckpointIntervalMs',
    group: 'keys',
    readBy: 'worker',
    kind: integer(1000, 60_000, 30_000),
    meaning: 'how often the worker signs the head of every chain that grew (1000 to 60000)',
  }),
  variable({
    name: 'LOG_STREAM_ALLOW_PLAIN_SYSLOG',
    key: 'logStreamAllowPlainSyslog',
    group: 'keys',
    readBy: 'both',
    kind: boolean(false),
    meaning: 'allow `syslog` log streams over plain TCP (`tls: false`); off, syslog streams use TLS only ([log streams](docs/audit-trail.md#streams))',
  }),
  variable({
    name: 'LOG_STREAM_CONCURRENCY',
    key: 'logStreamConcurrency',
    group: 'keys',
    readBy: 'worker',
    kind: integer(1, 64, 4),
    meaning: 'log streams one worker delivers at once (1 to 64), each under a lease',
  }),
  variable({
    name: 'LOG_STREAM_INTERVAL_MS',
    key: 'logStreamIntervalMs',
    group: 'keys',
    readBy: 'worker',
    kind: integer(100, 60_000, 1000),
    meaning: 'how often the worker looks for log streams behind their chain head (100 to 60000)',
  }),
  variable({
    name: 'LOG_PARTITION_INTERVAL',
    key: 'logPartitionInterval',
    group: 'keys',
    readBy: 'worker',
    kind: oneOf(LOG_PARTITION_INTERVALS, 'month'),
    meaning:
      'the span of one partition of the logs table by `created_at` (UTC): `day`, `week` or `month`; the worker creates the current one and the next ones ahead (docs/audit-trail.md, "Time partitions")',
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
