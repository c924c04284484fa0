import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';
import { GENERATED_KEY_FILE, parseSigningKey, resolveLogSigningKey } from './log-signing-key';

describe('loadConfig', () => {
  it('runs on embedded defaults when nothing is set', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      consolePort: 3001,
      databaseUrl: undefined,
      dataDir: './.data',
      redisUrl: undefined,
      queuePrefix: 'gatehouse',
      proxyAllowHttp: false,
      proxyAllowedPrivateCidrs: [],
      logLevel: 'info',
      bodyLimitBytes: 1024 * 1024,
      reactorPoolSize: availableParallelism(),
      reactorTimeoutMs: 5000,
      reactorMemoryMb: 64,
      reactorTenantMaxConcurrency: Math.max(1, Math.floor(availableParallelism() / 2)),
      reactorTenantMaxQueue: 100,
      proxyTimeoutMs: 25_000,
      databasePoolSize: 10,
      databaseStatementTimeoutMs: 30_000,
      authThrottleLimit: 60,
      authThrottleWindowSeconds: 60,
      trustedProxies: [],
      transformConsoleLog: false,
      metricsPort: undefined,
      metricsHost: '127.0.0.1',
      otlpEndpoint: undefined,
      logCheckpointIntervalMs: 30_000,
      logStreamAllowPlainSyslog: false,
      logStreamConcurrency: 4,
      logStreamIntervalMs: 1000,
      logPartitionInterval: 'month',
      logSigningRetiredKeys: [],
      logRetentionIntervalMs: 600_000,
      shutdownDelayMs: 0,
      migrateOnStart: true,
    });
  });

  it('treats blank values as unset', () => {
    expect(loadConfig({ PORT: '  ', DATABASE_URL: '', REACTOR_TENANT_MAX_QUEUE: ' ' })).toMatchObject({
      port: 3000,
      databaseUrl: undefined,
      reactorTenantMaxQueue: 100,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      CONSOLE_PORT: '8081',
      CONSOLE_PUBLIC_URL: 'https://console.example.com/',
      API_PUBLIC_URL: 'https://api.example.com:443',
      DATABASE_URL: 'postgres://u@db:5432/g',
      DATA_DIR: '/var/lib/gatehouse',
      REDIS_URL: 'rediss://cache:6380',
      QUEUE_PREFIX: 'staging.gh',
      PROXY_ALLOW_HTTP: 'yes',
      PROXY_ALLOWED_PRIVATE_CIDRS: '10.0.0.0/8, ::1/128',
      LOG_LEVEL: 'debug',
      BODY_LIMIT_BYTES: '2048',
      REACTOR_POOL_SIZE: '4',
      REACTOR_TIMEOUT_MS: '1000',
      REACTOR_MEMORY_MB: '128',
      REACTOR_TENANT_MAX_CONCURRENCY: '3',
      REACTOR_TENANT_MAX_QUEUE: '20',
      PROXY_TIMEOUT_MS: '5000',
      DATABASE_POOL_SIZE: '20',
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      AUTH_THROTTLE_LIMIT: '0',
      AUTH_THROTTLE_WINDOW_SECONDS: '300',
      TRUSTED_PROXIES: '10.0.0.0/8,::1/128',
      TRANSFORM_CONSOLE_LOG: 'true',
      METRICS_PORT: '9464',
      METRICS_HOST: '0.0.0.0',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      LOG_SIGNING_KEY_FILE: '/run/secrets/log-signing-key',
      LOG_CHECKPOINT_INTERVAL_MS: '10000',
      LOG_STREAM_ALLOW_PLAIN_SYSLOG: 'true',
      LOG_STREAM_CONCURRENCY: '8',
      LOG_STREAM_INTERVAL_MS: '500',
      LOG_PARTITION_INTERVAL: 'week',
      LOG_SIGNING_RETIRED_KEYS: 'QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=, d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
      LOG_RETENTION_INTERVAL_MS: '60000',
      SHUTDOWN_DELAY_MS: '5000',
    });
    expect(config).toEqual({
      port: 8080,
      consolePort: 8081,
      consolePublicUrl: 'https://console.example.com',
      apiPublicUrl: 'https://api.example.com',
      databaseUrl: 'postgres://u@db:5432/g',
      dataDir: '/var/lib/gatehouse',
      redisUrl: 'rediss://cache:6380',
      queuePrefix: 'staging.gh',
      proxyAllowHttp: true,
      proxyAllowedPrivateCidrs: ['10.0.0.0/8', '::1/128'],
      logLevel: 'debug',
      bodyLimitBytes: 2048,
      reactorPoolSize: 4,
      reactorTimeoutMs: 1000,
      reactorMemoryMb: 128,
      reactorTenantMaxConcurrency: 3,
      reactorTenantMaxQueue: 20,
      proxyTimeoutMs: 5000,
      databasePoolSize: 20,
      databaseStatementTimeoutMs: 0,
      authThrottleLimit: 0,
      authThrottleWindowSeconds: 300,
      trustedProxies: ['10.0.0.0/8', '::1/128'],
      transformConsoleLog: true,
      metricsPort: 9464,
      metricsHost: '0.0.0.0',
      otlpEndpoint: 'http://collector:4318',
      logSigningKeyFile: '/run/secrets/log-signing-key',
      logCheckpointIntervalMs: 10_000,
      logStreamAllowPlainSyslog: true,
      logStreamConcurrency: 8,
      logStreamIntervalMs: 500,
      logPartitionInterval: 'week',
      logSigningRetiredKeys: ['QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=', 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'],
      logRetentionIntervalMs: 60_000,
      shutdownDelayMs: 5000,
      migrateOnStart: true,
    });
  });

  it.each([
    ['PORT', '70000', /^PORT must be an integer from 0 to 65535, got '70000'$/],
    ['PORT', '80.5', /^PORT must be an integer/],
    ['DATABASE_URL', 'mysql://db/x', /^DATABASE_URL must use postgres: or postgresql:, got 'mysql:'$/],
    ['DATABASE_URL', 'not a url', /^DATABASE_URL must be a URL/],
    ['REDIS_URL', 'http://cache', /^REDIS_URL must use redis: or rediss:/],
    ['QUEUE_PREFIX', 'has space', /^QUEUE_PREFIX must match/],
    ['PROXY_ALLOW_HTTP', 'maybe', /^PROXY_ALLOW_HTTP must be true or false, got 'maybe'$/],
    ['PROXY_ALLOWED_PRIVATE_CIDRS', '10.0.0.0', /^PROXY_ALLOWED_PRIVATE_CIDRS must be a comma-separated list of CIDR ranges/],
    ['PROXY_ALLOWED_PRIVATE_CIDRS', '10.0.0.0/33', /got '10.0.0.0\/33'$/],
    ['PROXY_ALLOWED_PRIVATE_CIDRS', 'localhost/8', /got 'localhost\/8'$/],
    ['AUTH_THROTTLE_WINDOW_SECONDS', '0', /^AUTH_THROTTLE_WINDOW_SECONDS must be an integer from 1 to 86400/],
    ['TRUSTED_PROXIES', '10.0.0.1', /^TRUSTED_PROXIES must be a comma-separated list of CIDR ranges/],
    ['LOG_LEVEL', 'verbose', /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got 'verbose'$/],
    ['BODY_LIMIT_BYTES', '10', /^BODY_LIMIT_BYTES must be an integer from 1024 to 67108864/],
    ['REACTOR_POOL_SIZE', '0', /^REACTOR_POOL_SIZE must be an integer from 1 to 256/],
    ['REACTOR_TIMEOUT_MS', '5', /^REACTOR_TIMEOUT_MS must be an integer from 10 to 60000/],
    ['REACTOR_MEMORY_MB', '4', /^REACTOR_MEMORY_MB must be an integer from 8 to 1024/],
    ['REACTOR_TENANT_MAX_CONCURRENCY', '0', /^REACTOR_TENANT_MAX_CONCURRENCY must be an integer from 1 to \d+, got '0'$/],
    ['REACTOR_TENANT_MAX_CONCURRENCY', '300', /^REACTOR_TENANT_MAX_CONCURRENCY must be an integer from 1 to \d+, got '300'$/],
    ['REACTOR_TENANT_MAX_QUEUE', '0', /^REACTOR_TENANT_MAX_QUEUE must be an integer from 1 to 10000, got '0'$/],
    ['PROXY_TIMEOUT_MS', '1000000', /^PROXY_TIMEOUT_MS must be an integer from 10 to 300000/],
    ['DATABASE_POOL_SIZE', 'ten', /^DATABASE_POOL_SIZE must be an integer from 1 to 200, got 'ten'$/],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '-1', /^DATABASE_STATEMENT_TIMEOUT_MS must be an integer from 0 to 3600000, got '-1'$/],
    ['TRANSFORM_CONSOLE_LOG', 'loud', /^TRANSFORM_CONSOLE_LOG must be true or false, got 'loud'$/],
    ['CONSOLE_PORT', '3000', /^CONSOLE_PORT must differ from PORT \(3000\): the console never shares the API's origin/],
    ['CONSOLE_PORT', 'on', /^CONSOLE_PORT must be an integer from 0 to 65535, got 'on'$/],
    ['CONSOLE_PUBLIC_URL', 'ftp://console', /^CONSOLE_PUBLIC_URL must use http: or https:, got 'ftp:'$/],
    ['CONSOLE_PUBLIC_URL', 'https://example.com/console', /^CONSOLE_PUBLIC_URL must be an origin such as https:\/\/console.example.com: no path/],
    ['API_PUBLIC_URL', 'https://example.com/?a=1', /^API_PUBLIC_URL must be an origin/],
    ['METRICS_PORT', '65536', /^METRICS_PORT must be an integer from 0 to 65535, got '65536'$/],
    ['METRICS_HOST', 'http://0.0.0.0', /^METRICS_HOST must be an IP address \(0.0.0.0 or :: for every interface\) or a host name, got 'http:\/\/0.0.0.0'$/],
    ['METRICS_HOST', '0.0.0.0:9464', /^METRICS_HOST must be an IP address/],
    ['LOG_CHECKPOINT_INTERVAL_MS', '60001', /^LOG_CHECKPOINT_INTERVAL_MS must be an integer from 1000 to 60000, got '60001'$/],
    ['LOG_PARTITION_INTERVAL', 'year', /^LOG_PARTITION_INTERVAL must be one of day, week, month, got 'year'$/],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://collector:4317', /^OTEL_EXPORTER_OTLP_ENDPOINT must use http: or https:, got 'grpc:'$/],
    ['SHUTDOWN_DELAY_MS', '60001', /^SHUTDOWN_DELAY_MS must be an integer from 0 to 60000, got '60001'$/],
  ])('refuses %s=%s with one line naming the variable', (name, value, message) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  describe("the console's origin", () => {
    it("is a listener of its own on 3001 unless CONSOLE_PORT is 'off'", () => {
      expect(loadConfig({ CONSOLE_PORT: 'OFF' }).consolePort).toBeUndefined();
      expect(loadConfig({ CONSOLE_PORT: '0', PORT: '0' }).consolePort).toBe(0);
      expect(loadConfig({ PORT: '3001', CONSOLE_PORT: 'off' }).port).toBe(3001);
      expect(() => loadConfig({ PORT: '3001' })).toThrow(/^CONSOLE_PORT must differ from PORT \(3001\)/);
      expect(() => loadConfig({ METRICS_PORT: '3001' })).toThrow(/^CONSOLE_PORT must differ from METRICS_PORT \(3001\)$/);
    });

    it('never shares the public origin of the API, and never echoes a URL with credentials', () => {
      expect(() => loadConfig({ CONSOLE_PUBLIC_URL: 'https://gh.example.com', API_PUBLIC_URL: 'https://gh.example.com:443/' })).toThrow(
        /^CONSOLE_PUBLIC_URL and API_PUBLIC_URL must be different origins/,
      );
      expect(loadConfig({ CONSOLE_PUBLIC_URL: 'https://gh.example.com:8443', API_PUBLIC_URL: 'https://gh.example.com' })).toMatchObject({
        consolePublicUrl: 'https://gh.example.com:8443',
        apiPublicUrl: 'https://gh.example.com',
      });
      expect(() => loadConfig({ CONSOLE_PUBLIC_URL: 'https://user:secret@console.example.com' })).toThrow(ConfigError);
      try {
        loadConfig({ CONSOLE_PUBLIC_URL: 'https://user:secret@console.example.com' });
      } catch (error) {
        expect((error as Error).message).not.toContain('secret');
      }
    });
  });

  describe('secrets from files (<NAME>_FILE)', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const secret = (content: string) => {
      const path = join(dir, 'secret');
      writeFileSync(path, content);
      return path;
    };

    it('reads DATABASE_URL and REDIS_URL from the files named, without the trailing newline', () => {
      const database = secret('postgres://gatehouse:s3cret@db:5432/g\n');
      const config = loadConfig({ DATABASE_URL_FILE: database });
      expect(config.databaseUrl).toBe('postgres://gatehouse:s3cret@db:5432/g');
      writeFileSync(join(dir, 'redis'), 'rediss://:pw@cache:6380');
      expect(loadConfig({ REDIS_URL_FILE: join(dir, 'redis') }).redisUrl).toBe('rediss://:pw@cache:6380');
    });

    it('validates what the file holds like the variable itself, without echoing it', () => {
      const path = secret('mysql://root:hunter2@db/x');
      expect(() => loadConfig({ DATABASE_URL_FILE: path })).toThrow(/^DATABASE_URL must use postgres: or postgresql:, got 'mysql:'$/);
      expect(() => loadConfig({ DATABASE_URL_FILE: path })).not.toThrow(/hunter2/);
    });

    it.each([
      [
        'both the variable and the file',
        () => ({ DATABASE_URL: 'postgres://a@b/c', DATABASE_URL_FILE: secret('postgres://a@b/c') }),
        /^DATABASE_URL and DATABASE_URL_FILE are both set: set one$/,
      ],
      [
        'a file that does not exist',
        () => ({ DATABASE_URL_FILE: join(dir, 'missing') }),
        /^DATABASE_URL_FILE names '.*missing', which cannot be read \(ENOENT\)$/,
      ],
      ['an empty file', () => ({ REDIS_URL_FILE: secret('\n') }), /^REDIS_URL_FILE names '.*secret', which is empty$/],
    ])('refuses %s with one line', (_, env, message) => {
      expect(() => loadConfig(env())).toThrow(ConfigError);
      expect(() => loadConfig(env())).toThrow(message);
    });
  });
});

describe('LOG_SIGNING_KEY', () => {
  it('takes a PKCS#8 PEM or a 32-byte seed (hex or base64)', () => {
    const seed = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
    const pem = parseSigningKey(seed).export({ format: 'pem', type: 'pkcs8' }) as string;
    for (const key of [seed, Buffer.from(seed, 'hex').toString('base64'), pem]) {
      expect(loadConfig({ LOG_SIGNING_KEY: key }).logSigningKey).toBe(key.trim());
    }
  });

  it('refuses anything else without echoing the secret, and refuses both sources at once', () => {
    expect(() => loadConfig({ LOG_SIGNING_KEY: 'secret-material-abc' })).toThrow(/^LOG_SIGNING_KEY must be an Ed25519 private key/);
    try {
      loadConfig({ LOG_SIGNING_KEY: 'secret-material-abc' });
    } catch (error) {
      expect((error as Error).message).not.toContain('secret-material-abc');
    }
    expect(() => loadConfig({ LOG_SIGNING_KEY: 'x', LOG_SIGNING_KEY_FILE: '/k' })).toThrow(/both set/);
  });

  it('is generated once into DATA_DIR when none is given, and read back after', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gh-key-'));
    try {
      const first = resolveLogSigningKey({ dataDir });
      expect(first.generated).toBe(join(dataDir, GENERATED_KEY_FILE));
      expect(statSync(first.generated!).mode & 0o777).toBe(0o600);
      const again = resolveLogSigningKey({ dataDir });
      expect(again.generated).toBeUndefined();
      expect(again.key.export({ format: 'der', type: 'pkcs8' })).toEqual(first.key.export({ format: 'der', type: 'pkcs8' }));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('METRICS_HOST', () => {
  it.each(['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', 'metrics.internal'])('takes %s', (host) => {
    expect(loadConfig({ METRICS_HOST: host }).metricsHost).toBe(host);
  });
});
