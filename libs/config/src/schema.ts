import { availableParallelism } from 'node:os';
import { AUDIT_LOG_VARIABLES } from './schema-audit-logs';
import { KEY_VARIABLES } from './schema-keys';
import { boolean, Check, cidrs, integer, listenHost, matching, oneOf, origin, Parsed, portOrOff, ratio, text, url, variable } from './variable-kinds';

export { GROUPS } from './variable-kinds';
export type { Check, Reader, Variable } from './variable-kinds';

// Every environment variable Gatehouse reads, once: loadConfig parses them from here, and `npm run config:docs`
// writes `.env.example` and the README's configuration table from here (a unit test fails when those drift).

export { LOG_PARTITION_INTERVALS } from './schema-audit-logs';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** The samplers OTEL_TRACES_SAMPLER may name (the specification's, less the Jaeger and X-Ray remote ones). */
const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

export const VARIABLES = [
  // Listeners and origins.
  variable({
    name: 'PORT',
    key: 'port',
    group: 'listeners',
    readBy: 'api',
    kind: integer(0, 65535, 3000),
    meaning: 'API port (the management API, `/proxy`, `/docs`)',
  }),
  variable({
    name: 'CONSOLE_PORT',
    key: 'consolePort',
    group: 'listeners',
    readBy: 'api',
    kind: portOrOff(3001),
    meaning:
      "the web console's own listener: the console and the management API it calls, never `/proxy` or `/docs` ([origins](docs/security.md#origins)); `off`: no console; must differ from `PORT`",
  }),
  variable({
    name: 'CONSOLE_PUBLIC_URL',
    key: 'consolePublicUrl',
    group: 'listeners',
    readBy: 'api',
    kind: origin(),
    shownDefault: "unset: the request's host name with `CONSOLE_PORT`",
    example: 'https://console.example.com',
    meaning:
      "the console's origin as browsers reach it (`https://console.example.com`, an origin only): `/console` on `PORT` redirects there, and `/proxy` shares responses with it (CORS) for its *Try the proxy*",
  }),
  variable({
    name: 'API_PUBLIC_URL',
    key: 'apiPublicUrl',
    group: 'listeners',
    readBy: 'api',
    kind: origin(),
    shownDefault: "unset: the request's host name with `PORT`",
    example: 'https://api.example.com',
    meaning:
      "the API's origin as browsers reach it: the console's *Try the proxy* calls it (its CSP `connect-src`); never the same origin as `CONSOLE_PUBLIC_URL`",
  }),
  variable({
    name: 'BODY_LIMIT_BYTES',
    key: 'bodyLimitBytes',
    group: 'listeners',
    readBy: 'api',
    kind: integer(1024, 64 * 1024 * 1024, 1024 * 1024),
    meaning: 'largest request body (413 above it)',
  }),
  variable({
    name: 'TRUSTED_PROXIES',
    key: 'trustedProxies',
    group: 'listeners',
    readBy: 'api',
    kind: cidrs(),
    meaning:
      "CIDR ranges of the load balancers in front of the API, e.g. `10.0.0.0/8`: their `X-Forwarded-For` names the client; with none, the client is the connection's peer (used by the throttle and for a log's `source_ip`), and the service warns once when a request arrives with `X-Forwarded-For` ([authentication throttle](docs/security.md#authentication-throttle))",
  }),
  variable({
    name: 'SHUTDOWN_DELAY_MS',
    key: 'shutdownDelayMs',
    group: 'listeners',
    readBy: 'api',
    kind: integer(0, 60_000, 0),
    meaning:
      'after SIGTERM, how long `/health/ready` answers 503 while requests are still served, before the API stops accepting connections and drains (see [signals](docs/operations.md#signals-and-health))',
  }),

  // Database and queue.
  variable({
    name: 'DATABASE_URL',
    key: 'databaseUrl',
    group: 'storage',
    readBy: 'both',
    kind: url(['postgres:', 'postgresql:']),
    secret: true,
    fromFile: true,
    shownDefault: 'unset: embedded PostgreSQL (PGlite) under `DATA_DIR`',
    meaning: 'PostgreSQL connection (it holds the password: a secret)',
  }),
  variable({
    name: 'DATA_DIR',
    key: 'dataDir',
    group: 'storage',
    readBy: 'both',
    kind: text('./.data'),
    meaning:
      'where the embedded database (and any generated key) is kept, owner-only; refused when its group or others may write it ([local files](docs/security.md#local-files))',
  }),
  variable({
    name: 'DATABASE_POOL_SIZE',
    key: 'databasePoolSize',
    group: 'storage',
    readBy: 'both',
    kind: integer(1, 200, 10),
    meaning: 'connections per process to `DATABASE_URL`',
  }),
  variable({
    name: 'DATABASE_STATEMENT_TIMEOUT_MS',
    key: 'databaseStatementTimeoutMs',
    group: 'storage',
    readBy: 'both',
    kind: integer(0, 3_600_000, 30_000),
    meaning:
      'PostgreSQL cancels a statement running longer, and a server that does not answer at all is given up 2 s later: both 503s ([outages](docs/security.md#postgresql-outages-are-503s)); `0` is no limit; migrations are never limited',
  }),
  variable({
    name: 'MIGRATE_ON_START',
    key: 'migrateOnStart',
    group: 'storage',
    readBy: 'both',
    kind: boolean(true),
    meaning:
      'apply pending migrations when the api or worker starts; `false`: never migrate, and refuse to start (one line) while any is pending: a migration Job runs `gatehouse migrate` first, and the runtime database role needs no DDL ([Kubernetes](docs/operations/kubernetes.md))',
  }),
  variable({
    name: 'REDIS_URL',
    key: 'redisUrl',
    group: 'storage',
    readBy: 'both',
    kind: url(['redis:', 'rediss:']),
    secret: true,
    fromFile: true,
    shownDefault: 'unset: an in-process queue, worker in the API process',
    meaning: 'Redis for BullMQ, the rate-limit counters and the cache versions (it may hold a password: a secret)',
  }),
  variable({
    name: 'QUEUE_PREFIX',
    key: 'queuePrefix',
    group: 'storage',
    readBy: 'both',
    kind: matching(/^[A-Za-z0-9_.-]{1,64}$/, 'gatehouse'),
    meaning:
      'key prefix of the BullMQ queues (`<prefix>:audit-logs:*`) and of the rate-limit counters (`<prefix>:ratelimit:*`); environments sharing one Redis use different ones',
  }),

  // Keys and secrets (schema-keys.ts).
  ...KEY_VARIABLES,

  // Audit logs (schema-audit-logs.ts).
  ...AUDIT_LOG_VARIABLES,

  // Proxies and authentication.
  variable({
    name: 'PROXY_ALLOW_HTTP',
    key: 'proxyAllowHttp',
    group: 'proxies',
    readBy: 'both',
    kind: boolean(false),
    meaning: 'allow `http://` proxy destinations and `http://` requests of transforms ([outbound HTTP](docs/transforms.md#outbound-http))',
  }),
  variable({
    name: 'PROXY_ALLOWED_PRIVATE_CIDRS',
    key: 'proxyAllowedPrivateCidrs',
    group: 'proxies',
    readBy: 'both',
    kind: cidrs(),
    meaning: "private ranges a destination (or a transform's own request) may resolve to, e.g. `127.0.0.0/8,::1/128`",
  }),
  variable({
    name: 'PROXY_TIMEOUT_MS',
    key: 'proxyTimeoutMs',
    group: 'proxies',
    readBy: 'api',
    kind: integer(10, 300_000, 25_000),
    meaning: 'destination timeout (504 after it)',
  }),
  variable({
    name: 'AUTH_THROTTLE_LIMIT',
    key: 'authThrottleLimit',
    group: 'proxies',
    readBy: 'api',
    kind: integer(0, 1_000_000, 60),
    meaning:
      'failed authentications (API keys and proxy keys) one client address may make per window before it is answered 429; 0 turns the throttle off (see [throttling](docs/keys.md#guessing-keys-is-throttled))',
  }),
  variable({
    name: 'AUTH_THROTTLE_WINDOW_SECONDS',
    key: 'authThrottleWindowSeconds',
    group: 'proxies',
    readBy: 'api',
    kind: integer(1, 86_400, 60),
    meaning: 'that window',
  }),

  // Transforms.
  variable({
    name: 'REACTOR_POOL_SIZE',
    key: 'reactorPoolSize',
    group: 'reactor',
    readBy: 'api',
    kind: integer(1, 256, () => availableParallelism()),
    shownDefault: 'number of CPUs',
    example: '2',
    meaning:
      'sandbox processes running transforms (one invocation each at a time; see [the execution model](docs/proxies.md#execution-model-sandbox-processes))',
  }),
  variable({
    name: 'REACTOR_TIMEOUT_MS',
    key: 'reactorTimeoutMs',
    group: 'reactor',
    readBy: 'api',
    kind: integer(10, 60_000, 5000),
    meaning: 'wall-clock limit of one transform; its sandbox process is killed at it',
  }),
  variable({
    name: 'REACTOR_MEMORY_MB',
    key: 'reactorMemoryMb',
    group: 'reactor',
    readBy: 'api',
    kind: integer(8, 1024, 64),
    meaning: "heap limit of one isolate; its process's address space may grow by twice this plus 192 MiB",
  }),
  variable({
    name: 'REACTOR_TENANT_MAX_CONCURRENCY',
    key: 'reactorTenantMaxConcurrency',
    group: 'reactor',
    readBy: 'api',
    // Half the pool by default: one tenant never holds every sandbox.
    kind: integer(1, poolSize, (parsed) => Math.max(1, Math.floor(poolSize(parsed) / 2))),
    shownDefault: 'half the pool (at least 1)',
    example: '1',
    meaning: 'sandbox processes one tenant may hold at once (at most `REACTOR_POOL_SIZE`)',
  }),
  variable({
    name: 'REACTOR_TENANT_MAX_QUEUE',
    key: 'reactorTenantMaxQueue',
    group: 'reactor',
    readBy: 'api',
    kind: integer(1, 10_000, 100),
    meaning: 'invocations of one tenant waiting beyond its share; beyond: 503 with `Retry-After`',
  }),
  variable({
    name: 'TRANSFORM_CONSOLE_LOG',
    key: 'transformConsoleLog',
    group: 'reactor',
    readBy: 'api',
    kind: boolean(false),
    meaning: "write transforms' `console` output (the tenant's data) to the service log, bounded (see [logs](docs/operations.md#logs))",
  }),

  // Logs, metrics and tracing.
  variable({
    name: 'LOG_LEVEL',
    key: 'logLevel',
    group: 'observability',
    readBy: 'both',
    kind: oneOf(LOG_LEVELS, 'info'),
    meaning: 'how much is logged: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
  }),
  variable({
    name: 'METRICS_PORT',
    key: 'metricsPort',
    group: 'observability',
    readBy: 'both',
    kind: integer(0, 65535),
    shownDefault: 'unset: no metrics listener',
    example: '9464',
    meaning: 'port of the Prometheus endpoint `/metrics` (api and worker), apart from the public port (see [metrics](docs/operations.md#metrics))',
  }),
  variable({
    name: 'METRICS_HOST',
    key: 'metricsHost',
    group: 'observability',
    readBy: 'both',
    kind: listenHost('127.0.0.1'),
    shownDefault: '`127.0.0.1` (the image: `0.0.0.0`)',
    meaning:
      "address the metrics listener binds: loopback, so only this host scrapes it; `0.0.0.0` or `::` for every interface. The container image sets `0.0.0.0`, since Prometheus scrapes it from another container or pod (the container's network is the boundary: do not publish `METRICS_PORT`)",
  }),
  variable({
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    key: 'otlpEndpoint',
    group: 'observability',
    readBy: 'both',
    kind: url(['http:', 'https:']),
    shownDefault: 'unset: no tracing',
    example: 'http://127.0.0.1:4318',
    meaning: 'OTLP/HTTP collector base URL (`http://collector:4318`); spans go to `<it>/v1/traces` (see [tracing](docs/operations.md#tracing))',
  }),
  // The sampler is read by the tracing (libs/runtime) before the configuration: checked here for one clear line.
  variable({
    name: 'OTEL_TRACES_SAMPLER',
    group: 'observability',
    readBy: 'both',
    kind: oneOf(TRACES_SAMPLERS, 'parentbased_always_on', true),
    meaning:
      'which traces are sampled: `always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off` or `parentbased_traceidratio` (see [tracing](docs/operations.md#tracing))',
  }),
  variable({ name: 'OTEL_TRACES_SAMPLER_ARG', group: 'observability', readBy: 'both', kind: ratio(1), meaning: 'the ratio (0 to 1) of the ratio samplers' }),
  variable({
    name: 'OTEL_RESOURCE_ATTRIBUTES',
    group: 'observability',
    readBy: 'both',
    example: 'deployment.environment.name=production',
    meaning:
      "attributes of every exported span's resource, `key=value,...` (`deployment.environment.name=prod`); the SDK's other standard variables (`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`, `_COMPRESSION`, `OTEL_BSP_*`) apply too",
  }),
  // Read by the worker's heartbeat itself: its container healthcheck (healthcheck.js) reads it without the configuration.
  variable({
    name: 'WORKER_HEARTBEAT_FILE',
    group: 'observability',
    readBy: 'worker',
    shownDefault: '`$TMPDIR/gatehouse-worker.heartbeat`',
    example: '/tmp/gatehouse-worker.heartbeat',
    meaning: "the worker's heartbeat, read by its container healthcheck",
  }),

  // The CLI's own (apps/api/src/cli/config-as-code/tenant-api.ts reads them, after its flags).
  variable({
    name: 'GATEHOUSE_URL',
    group: 'cli',
    readBy: 'cli',
    example: 'http://localhost:3000',
    meaning:
      'the service `gatehouse apply`, `diff` and `export` call, unless `--url` names one (see [configuration as code](docs/operations/configuration-as-code.md))',
  }),
  variable({
    name: 'GATEHOUSE_API_KEY',
    group: 'cli',
    readBy: 'cli',
    secret: true,
    meaning: 'the management key they call it with, unless `--api-key-file` or `--api-key` gives one',
  }),
  variable({
    name: 'GATEHOUSE_API_KEY_FILE',
    group: 'cli',
    readBy: 'cli',
    example: '/run/secrets/gatehouse-api-key',
    meaning: 'the same, read from a file (it wins over `GATEHOUSE_API_KEY`)',
  }),
];

function poolSize(parsed: Parsed): number {
  // REACTOR_POOL_SIZE comes first; when it is refused, its own line says so and this bound is the widest.
  return (parsed.reactorPoolSize as number | undefined) ?? 256;
}

/** Two variables that say the same thing another way: giving both is refused. */
function oneOfTwo(name: string, other: string): Check {
  return { of: [], problem: (_, given) => (given(name) && given(other) ? `${name} and ${other} are both set: give one` : undefined) };
}

export const CHECKS: readonly Check[] = [
  oneOfTwo('LOG_SIGNING_KEY', 'LOG_SIGNING_KEY_FILE'),
  oneOfTwo('VAULT_KEY', 'VAULT_KEY_FILE'),
  oneOfTwo('VAULT_KEY_PREVIOUS', 'VAULT_KEY_PREVIOUS_FILE'),
  {
    of: ['PORT', 'CONSOLE_PORT'],
    problem: ({ port, consolePort }) =>
      consolePort !== undefined && consolePort !== 0 && consolePort === port
        ? `CONSOLE_PORT must differ from PORT (${port}): the console never shares the API's origin; 'off' turns it off`
        : undefined,
  },
  {
    of: ['CONSOLE_PORT', 'METRICS_PORT'],
    problem: ({ consolePort, metricsPort }) =>
      consolePort !== undefined && consolePort !== 0 && consolePort === metricsPort ? `CONSOLE_PORT must differ from METRICS_PORT (${consolePort})` : undefined,
  },
  {
    of: ['CONSOLE_PUBLIC_URL', 'API_PUBLIC_URL'],
    problem: ({ consolePublicUrl, apiPublicUrl }) =>
      consolePublicUrl !== undefined && consolePublicUrl === apiPublicUrl
        ? "CONSOLE_PUBLIC_URL and API_PUBLIC_URL must be different origins: the console never shares the API's origin"
        : undefined,
  },
];
