import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { parseSigningKey } from './log-signing-key';
import { parseVaultKey, parseVaultKeyList } from './vault-key';

export interface AppConfig {
  port: number;
  /** The console's own listener (its origin holds keys: never the API's, which serves tenants' bytes); unset: off. */
  consolePort?: number;
  /** The console's origin as browsers reach it (its own host name); unset: this host with CONSOLE_PORT. */
  consolePublicUrl?: string;
  /** The API's origin as browsers reach it (the console's "Try the proxy" calls it); unset: this host with PORT. */
  apiPublicUrl?: string;
  databaseUrl?: string;
  dataDir: string;
  redisUrl?: string;
  queuePrefix: string;
  proxyAllowHttp: boolean;
  proxyAllowedPrivateCidrs: string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  bodyLimitBytes: number;
  reactorPoolSize: number;
  reactorTimeoutMs: number;
  reactorMemoryMb: number;
  reactorTenantMaxConcurrency: number;
  reactorTenantMaxQueue: number;
  proxyTimeoutMs: number;
  databasePoolSize: number;
  /** A statement PostgreSQL runs longer than this is cancelled, and one it never answers fails this plus 2 s later; 0: none. */
  databaseStatementTimeoutMs: number;
  /** The Ed25519 key that signs log checkpoints, as given (PEM, or base64/hex of the 32-byte seed); never logged. */
  logSigningKey?: string;
  logSigningKeyFile?: string;
  logCheckpointIntervalMs: number;
  /** The vault's key-encryption key, as given (32 bytes, base64 or hex); never logged. */
  vaultKey?: string;
  vaultKeyFile?: string;
  /** Older key-encryption keys that still unwrap data keys during a rotation; never logged. */
  vaultKeyPrevious?: string;
  vaultKeyPreviousFile?: string;
  /** Failed authentications per client address per window before 429s; 0 turns the throttle off. */
  authThrottleLimit: number;
  authThrottleWindowSeconds: number;
  /** Peers whose X-Forwarded-For is believed (CIDR ranges); empty: the socket's address is the client. */
  trustedProxies: string[];
  /** Write transforms' console output to the service log (bounded); off by default: it is the tenant's data. */
  transformConsoleLog: boolean;
  /** The Prometheus listener's port; unset: no metrics listener. */
  metricsPort?: number;
  /** The address it binds: loopback unless told (the image binds every interface of its container). */
  metricsHost: string;
  /** OTLP/HTTP endpoint spans are exported to; unset: no tracing at all. */
  otlpEndpoint?: string;
  /** After SIGTERM, how long /health/ready answers 503 while requests are still served, before draining. */
  shutdownDelayMs: number;
  /** Apply pending migrations at start (default); false: refuse to start while any is pending (a migration Job runs them). */
  migrateOnStart: boolean;
  /** The first tenant's management key, supplied (BOOTSTRAP_MANAGEMENT_KEY_FILE) instead of generated; never logged. */
  bootstrapManagementKey?: string;
}

/** A configuration value that cannot be used; the message names the variable, for one clear line at start. */
export class ConfigError extends Error {}

const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

type Env = Record<string, string | undefined>;

/**
 * Variables that may instead be read from a file named by `<NAME>_FILE` (Docker/Kubernetes secrets), as the official
 * database images do: `DATABASE_URL_FILE=/run/secrets/database_url`. A variable that carries a secret belongs here.
 */
export const FILE_VARIABLES = ['DATABASE_URL', 'REDIS_URL', 'BOOTSTRAP_MANAGEMENT_KEY'];

/** How Gatehouse generates keys (`key_` and 40 base62 characters): a supplied bootstrap key must look the same. */
const GENERATED_KEY = /^key_[0-9A-Za-z]{40}$/;

export function loadConfig(processEnv: Env = process.env): AppConfig {
  const env = withFileVariables(processEnv);
  const reactorPoolSize = integer(env, 'REACTOR_POOL_SIZE', availableParallelism(), 1, 256);
  checkTracesSampler(env);
  const port = integer(env, 'PORT', 3000, 0, 65535);
  return {
    port,
    ...consoleOrigin(env, port),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: nonEmpty(env, 'DATA_DIR') ?? './.data',
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    queuePrefix: pattern(env, 'QUEUE_PREFIX', /^[A-Za-z0-9_.-]{1,64}$/, 'gatehouse'),
    proxyAllowHttp: boolean(env, 'PROXY_ALLOW_HTTP', false),
    proxyAllowedPrivateCidrs: cidrs(env, 'PROXY_ALLOWED_PRIVATE_CIDRS'),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    reactorPoolSize,
    reactorTimeoutMs: integer(env, 'REACTOR_TIMEOUT_MS', 5000, 10, 60_000),
    reactorMemoryMb: integer(env, 'REACTOR_MEMORY_MB', 64, 8, 1024),
    // Half the pool by default: one tenant never holds every sandbox.
    reactorTenantMaxConcurrency: integer(env, 'REACTOR_TENANT_MAX_CONCURRENCY', Math.max(1, Math.floor(reactorPoolSize / 2)), 1, reactorPoolSize),
    reactorTenantMaxQueue: integer(env, 'REACTOR_TENANT_MAX_QUEUE', 100, 1, 10_000),
    proxyTimeoutMs: integer(env, 'PROXY_TIMEOUT_MS', 25_000, 10, 300_000),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
    ...signingKey(env),
    ...vaultKeys(env),
    logCheckpointIntervalMs: integer(env, 'LOG_CHECKPOINT_INTERVAL_MS', 30_000, 1000, 60_000),
    authThrottleLimit: integer(env, 'AUTH_THROTTLE_LIMIT', 60, 0, 1_000_000),
    authThrottleWindowSeconds: integer(env, 'AUTH_THROTTLE_WINDOW_SECONDS', 60, 1, 86_400),
    trustedProxies: cidrs(env, 'TRUSTED_PROXIES'),
    transformConsoleLog: boolean(env, 'TRANSFORM_CONSOLE_LOG', false),
    metricsPort: nonEmpty(env, 'METRICS_PORT') === undefined ? undefined : integer(env, 'METRICS_PORT', 0, 0, 65535),
    metricsHost: listenHost(env, 'METRICS_HOST', '127.0.0.1'),
    otlpEndpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']),
    shutdownDelayMs: integer(env, 'SHUTDOWN_DELAY_MS', 0, 0, 60_000),
    migrateOnStart: boolean(env, 'MIGRATE_ON_START', true),
    ...bootstrapKey(env),
  };
}

/** OTEL_TRACES_SAMPLER(_ARG) are read by the tracing (libs/runtime) before this runs: checked here for one clear line. */
function checkTracesSampler(env: Env): void {
  // Case-insensitive, as the specification has enumerations read.
  oneOf({ OTEL_TRACES_SAMPLER: nonEmpty(env, 'OTEL_TRACES_SAMPLER')?.toLowerCase() }, 'OTEL_TRACES_SAMPLER', TRACES_SAMPLERS, 'parentbased_always_on');
  const arg = nonEmpty(env, 'OTEL_TRACES_SAMPLER_ARG');
  if (arg !== undefined && !(/^\d*\.?\d+$/.test(arg) && Number(arg) <= 1)) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got '${arg}'`);
}

function bootstrapKey(env: Env): Pick<AppConfig, 'bootstrapManagementKey'> {
  const key = nonEmpty(env, 'BOOTSTRAP_MANAGEMENT_KEY');
  if (key === undefined) return {};
  // The value is a secret: never echoed, not even in part.
  if (!GENERATED_KEY.test(key)) throw new ConfigError('BOOTSTRAP_MANAGEMENT_KEY(_FILE) must hold a key as Gatehouse generates them: key_ and 40 letters or digits');
  return { bootstrapManagementKey: key };
}

/**
 * CONSOLE_PORT (3001 by default, `off` for none) and the two public origins. The console and the API are never one
 * origin: the same port, or the same public URL, is refused.
 */
function consoleOrigin(env: Env, port: number): Pick<AppConfig, 'consolePort' | 'consolePublicUrl' | 'apiPublicUrl'> {
  const off = nonEmpty(env, 'CONSOLE_PORT')?.toLowerCase() === 'off';
  const consolePort = off ? undefined : integer(env, 'CONSOLE_PORT', 3001, 0, 65535);
  if (consolePort !== undefined && consolePort !== 0 && consolePort === port) {
    throw new ConfigError(`CONSOLE_PORT must differ from PORT (${port}): the console never shares the API's origin; 'off' turns it off`);
  }
  const metricsPort = nonEmpty(env, 'METRICS_PORT');
  if (consolePort !== undefined && consolePort !== 0 && metricsPort === String(consolePort)) {
    throw new ConfigError(`CONSOLE_PORT must differ from METRICS_PORT (${consolePort})`);
  }
  const consolePublicUrl = publicOrigin(env, 'CONSOLE_PUBLIC_URL');
  const apiPublicUrl = publicOrigin(env, 'API_PUBLIC_URL');
  if (consolePublicUrl !== undefined && consolePublicUrl === apiPublicUrl) {
    throw new ConfigError('CONSOLE_PUBLIC_URL and API_PUBLIC_URL must be different origins: the console never shares the API\'s origin');
  }
  return {
    ...(consolePort === undefined ? {} : { consolePort }),
    ...(consolePublicUrl === undefined ? {} : { consolePublicUrl }),
    ...(apiPublicUrl === undefined ? {} : { apiPublicUrl }),
  };
}

/** An http(s) origin (scheme, host, port; nothing after the host but `/`), normalised (`https://h:443/` -> `https://h`). */
function publicOrigin(env: Env, name: string): string | undefined {
  const raw = url(env, name, ['http:', 'https:']);
  if (raw === undefined) return undefined;
  const parsed = new URL(raw);
  // The origin goes into headers (a CSP, a Location) and a page: a host of letters, digits, dots, dashes, an IPv6 in [].
  if (!/^[A-Za-z0-9.\-[\]:]+$/.test(parsed.host) || parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    // Not echoed: it may carry credentials.
    throw new ConfigError(`${name} must be an origin such as https://console.example.com: no path, query, fragment or credentials`);
  }
  return parsed.origin;
}

/** `env` with each FILE_VARIABLES entry that is given as `<NAME>_FILE` read from that file (one trailing newline cut). */
function withFileVariables(env: Env): Env {
  const out = { ...env };
  for (const name of FILE_VARIABLES) {
    const file = nonEmpty(env, `${name}_FILE`);
    if (file === undefined) continue;
    if (nonEmpty(env, name) !== undefined) throw new ConfigError(`${name} and ${name}_FILE are both set: set one`);
    try {
      out[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      // The file's name, never its content.
      throw new ConfigError(`${name}_FILE names '${file}', which cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (out[name]!.trim() === '') throw new ConfigError(`${name}_FILE names '${file}', which is empty`);
  }
  return out;
}

function signingKey(env: Env): Pick<AppConfig, 'logSigningKey' | 'logSigningKeyFile'> {
  const key = nonEmpty(env, 'LOG_SIGNING_KEY');
  const file = nonEmpty(env, 'LOG_SIGNING_KEY_FILE');
  if (key !== undefined && file !== undefined) throw new ConfigError('LOG_SIGNING_KEY and LOG_SIGNING_KEY_FILE are both set: give one');
  if (key !== undefined) {
    try {
      parseSigningKey(key);
    } catch {
      // The value is a secret: never echoed.
      throw new ConfigError('LOG_SIGNING_KEY must be an Ed25519 private key: PKCS#8 PEM, or the 32-byte seed as base64 or hex');
    }
  }
  return { ...(key === undefined ? {} : { logSigningKey: key }), ...(file === undefined ? {} : { logSigningKeyFile: file }) };
}

function vaultKeys(env: Env): Pick<AppConfig, 'vaultKey' | 'vaultKeyFile' | 'vaultKeyPrevious' | 'vaultKeyPreviousFile'> {
  const given = (name: string, parse: (text: string) => unknown, expected: string) => {
    const value = nonEmpty(env, name);
    const file = nonEmpty(env, `${name}_FILE`);
    if (value !== undefined && file !== undefined) throw new ConfigError(`${name} and ${name}_FILE are both set: give one`);
    if (value !== undefined) {
      try {
        parse(value);
      } catch {
        // The value is a secret: never echoed.
        throw new ConfigError(`${name} must be ${expected}`);
      }
    }
    return { value, file };
  };
  const key = given('VAULT_KEY', parseVaultKey, 'a 32-byte key as base64 or hex (openssl rand -base64 32)');
  const previous = given('VAULT_KEY_PREVIOUS', parseVaultKeyList, 'one or more 32-byte keys as base64 or hex, separated by commas');
  return {
    ...(key.value === undefined ? {} : { vaultKey: key.value }),
    ...(key.file === undefined ? {} : { vaultKeyFile: key.file }),
    ...(previous.value === undefined ? {} : { vaultKeyPrevious: previous.value }),
    ...(previous.file === undefined ? {} : { vaultKeyPreviousFile: previous.file }),
  };
}

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return Number(raw);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got '${raw}'`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!allowed.includes(raw as T)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return raw as T;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(' or ')}//...)`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got '${parsed.protocol}'`);
  }
  return raw;
}

function cidrs(env: Env, name: string): string[] {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return [];
  return raw.split(',').map((part) => {
    const cidr = part.trim();
    const [address, bits, ...rest] = cidr.split('/');
    const family = isIP(address ?? '');
    const max = family === 6 ? 128 : 32;
    if (rest.length > 0 || family === 0 || bits === undefined || !/^\d+$/.test(bits) || Number(bits) > max) {
      throw new ConfigError(`${name} must be a comma-separated list of CIDR ranges such as 127.0.0.0/8,::1/128, got '${cidr}'`);
    }
    return cidr;
  });
}

function pattern(env: Env, name: string, allowed: RegExp, fallback: string): string {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (!allowed.test(raw)) throw new ConfigError(`${name} must match ${allowed.source}, got '${raw}'`);
  return raw;
}

/** An address to listen on: an IPv4 or IPv6 literal (`0.0.0.0`, `::` for every interface) or a host name. */
function listenHost(env: Env, name: string, fallback: string): string {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return fallback;
  if (isIP(raw) === 0 && !/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(raw)) {
    throw new ConfigError(`${name} must be an IP address (0.0.0.0 or :: for every interface) or a host name, got '${raw}'`);
  }
  return raw;
}
