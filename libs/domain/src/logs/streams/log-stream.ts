import { randomBytes } from 'node:crypto';
import { FieldErrorCollector } from '../../shared/domain-error';
import { DestinationPolicy } from '../../proxies/destination-policy';
import { validateDestinationUrl } from '../../proxies/proxy';

export const LOG_STREAM_KINDS = ['https', 'syslog', 'splunk_hec', 'datadog'] as const;
export type LogStreamKind = (typeof LOG_STREAM_KINDS)[number];
export type LogStreamState = 'active' | 'paused' | 'failing';

export const MAX_LOG_STREAM_NAME_LENGTH = 200;
export const MAX_LOG_STREAMS_PER_TENANT = 20;
export const MAX_STREAM_BATCH_SIZE = 1000;
export const DEFAULT_STREAM_BATCH_SIZE = 500;
const MAX_TEXT = 200;
const MAX_CA_LENGTH = 65_536;
const MAX_HOST_LENGTH = 253;
const MAX_ECHOED_NAME = 64;
const MAX_ECHOED_UNKNOWN = 20;

/** Non-secret settings, as stored and shown (the kind decides which members exist). */
export type LogStreamSettings = Record<string, string | number | boolean>;
/** Write-only credentials: sealed by the vault at rest, never returned (the webhook secret once, at creation). */
export type LogStreamSecrets = Record<string, string>;

export interface LogStream {
  id: string;
  tenantId: string;
  name: string;
  kind: LogStreamKind;
  settings: LogStreamSettings;
  secrets: LogStreamSecrets;
  paused: boolean;
  /** The chain position of the last log the receiver acknowledged (0: none yet). */
  position: number;
  lastSyncedAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
  /** Consecutive failed deliveries (the backoff grows with it); 0 after a success. */
  failures: number;
  /** Logs acknowledged, and logs sent again after an attempt whose acknowledgement was lost (at least once). */
  delivered: number;
  redelivered: number;
  createdBy: string | null;
  createdAt: Date;
  modifiedBy: string | null;
  modifiedAt: Date;
}

/** A stream with its tenant's chain head: what the API shows (state, lag). */
export interface LogStreamStatus {
  stream: LogStream;
  /** The tenant's chain head (0: no log yet). */
  headPosition: number;
  /** When the oldest log not yet acknowledged was written (null: caught up). */
  oldestPendingAt: Date | null;
}

export function streamState(stream: Pick<LogStream, 'paused' | 'lastError'>): LogStreamState {
  if (stream.paused) return 'paused';
  return stream.lastError === null ? 'active' : 'failing';
}

/** What each kind takes: its settings (with their types and defaults) and which of them are secrets. */
interface FieldRule {
  type: 'string' | 'integer' | 'boolean' | 'url' | 'host' | 'pem';
  required?: boolean;
  secret?: boolean;
  default?: string | number | boolean;
  min?: number;
  max?: number;
  /** Filled in by the service (never accepted from the caller). */
  generated?: boolean;
}

const COMMON: Record<string, FieldRule> = {
  batch_size: { type: 'integer', min: 1, max: MAX_STREAM_BATCH_SIZE, default: DEFAULT_STREAM_BATCH_SIZE },
  tls_ca: { type: 'pem' },
};

export const STREAM_SETTINGS: Record<LogStreamKind, Record<string, FieldRule>> = {
  https: { url: { type: 'url', required: true }, signing_secret: { type: 'string', secret: true, generated: true }, ...COMMON },
  syslog: {
    host: { type: 'host', required: true },
    port: { type: 'integer', min: 1, max: 65_535, default: 6514 },
    tls: { type: 'boolean', default: true },
    app_name: { type: 'string', default: 'gatehouse', max: 48 },
    hostname: { type: 'string', default: 'gatehouse', max: 255 },
    facility: { type: 'integer', min: 0, max: 23, default: 13 },
    ...COMMON,
  },
  splunk_hec: {
    url: { type: 'url', required: true },
    token: { type: 'string', required: true, secret: true },
    index: { type: 'string' },
    source: { type: 'string', default: 'gatehouse' },
    sourcetype: { type: 'string', default: 'gatehouse:audit' },
    host: { type: 'string' },
    ...COMMON,
  },
  datadog: {
    url: { type: 'url', default: 'https://http-intake.logs.datadoghq.com' },
    api_key: { type: 'string', required: true, secret: true },
    service: { type: 'string', default: 'gatehouse' },
    source: { type: 'string', default: 'gatehouse' },
    tags: { type: 'string' },
    hostname: { type: 'string' },
    ...COMMON,
  },
};

export interface StreamValidationContext {
  policy: DestinationPolicy;
  /** The operator allows syslog over plain TCP (LOG_STREAM_ALLOW_PLAIN_SYSLOG). */
  allowPlainSyslog: boolean;
}

export function isStreamKind(value: unknown): value is LogStreamKind {
  return typeof value === 'string' && (LOG_STREAM_KINDS as readonly string[]).includes(value);
}

/** A new webhook signing secret, in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function validateStreamName(value: unknown, errors: FieldErrorCollector): value is string {
  if (typeof value !== 'string' || value.trim().length === 0) errors.add('name', 'is required');
  else if (value.length > MAX_LOG_STREAM_NAME_LENGTH) errors.add('name', `must be at most ${MAX_LOG_STREAM_NAME_LENGTH} characters`);
  else return true;
  return false;
}

/**
 * Checks `input` (the caller's settings merged over the stored ones) against the kind's rules, every problem at once,
 * and splits the result into settings (defaults filled in) and secrets. `stored` keeps secrets the caller left out.
 */
export function resolveStreamSettings(
  kind: LogStreamKind,
  input: Record<string, unknown>,
  stored: LogStreamSecrets,
  context: StreamValidationContext,
  errors: FieldErrorCollector,
): { settings: LogStreamSettings; secrets: LogStreamSecrets } {
  const rules = STREAM_SETTINGS[kind];
  const settings: LogStreamSettings = {};
  const secrets: LogStreamSecrets = {};
  // Unknown names are echoed in the errors: each cut to MAX_ECHOED_NAME characters, and at most MAX_ECHOED_UNKNOWN of
  // them (a body of a million characters is refused in a ProblemDetails of a few hundred bytes, never a copy of it).
  const unknown = Object.keys(input).filter((name) => !Object.hasOwn(rules, name));
  for (const name of unknown.slice(0, MAX_ECHOED_UNKNOWN)) {
    const shown = name.length > MAX_ECHOED_NAME ? `${name.slice(0, MAX_ECHOED_NAME)}…` : name;
    errors.add(`settings.${shown}`, `is not a setting of a ${kind} stream`);
  }
  if (unknown.length > MAX_ECHOED_UNKNOWN) errors.add('settings', `has ${unknown.length} names that are not settings of a ${kind} stream`);
  for (const name of Object.keys(input)) {
    if (Object.hasOwn(rules, name) && rules[name]!.generated) errors.add(`settings.${name}`, 'is set by the service and cannot be given');
  }
  for (const [name, rule] of Object.entries(rules)) {
    const field = `settings.${name}`;
    const given = rule.generated ? undefined : input[name];
    let value: unknown = given ?? (rule.secret ? stored[name] : undefined) ?? rule.default;
    if (value === undefined) {
      if (rule.required) errors.add(field, 'is required');
      continue;
    }
    if (given !== undefined && given !== null) value = checkValue(field, rule, given, context, errors);
    if (value === undefined) continue;
    if (rule.secret) secrets[name] = String(value);
    else settings[name] = value as string | number | boolean;
  }
  if (kind === 'syslog' && settings.tls === false && !context.allowPlainSyslog) {
    errors.add('settings.tls', 'must be true: this service sends syslog over TLS only (the operator has not allowed plain TCP)');
  }
  if (kind === 'syslog' && settings.tls === false && settings.tls_ca !== undefined) errors.add('settings.tls_ca', 'is only for tls: true');
  return { settings, secrets };
}

function checkValue(field: string, rule: FieldRule, value: unknown, context: StreamValidationContext, errors: FieldErrorCollector): unknown {
  switch (rule.type) {
    case 'boolean':
      if (typeof value !== 'boolean') return errors.add(field, 'must be a boolean');
      return value;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min! || value > rule.max!) {
        return errors.add(field, `must be an integer from ${rule.min} to ${rule.max}`);
      }
      return value;
    case 'url': {
      const before = new FieldErrorCollector();
      validateDestinationUrl(value, context.policy, before, field);
      if (!before.isEmpty) {
        validateDestinationUrl(value, context.policy, errors, field);
        return undefined;
      }
      return String(value).replace(/\/+$/, '');
    }
    case 'host':
      // At most 253 characters whichever form: the IP literal pattern alone would take any run of hex digits.
      if (typeof value !== 'string' || value.length > MAX_HOST_LENGTH || !/^[A-Za-z0-9.-]{1,253}$|^\[?[0-9A-Fa-f:.]+\]?$/.test(value))
        return errors.add(field, `must be a host name or an IP address (at most ${MAX_HOST_LENGTH} characters)`);
      if (!context.policy.allowsLiteralHost(value)) return errors.add(field, 'must not be a private, loopback, link-local or otherwise non-public address');
      return value.replace(/^\[|\]$/g, '');
    case 'pem':
      if (typeof value !== 'string' || value.length > MAX_CA_LENGTH || !/-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/.test(value)) {
        return errors.add(field, `must be PEM certificates (at most ${MAX_CA_LENGTH} characters)`);
      }
      return value;
    default: {
      const max = rule.max ?? MAX_TEXT;
      if (typeof value !== 'string' || value.length === 0) return errors.add(field, 'must be a non-empty string');
      if (value.length > (rule.secret ? 1000 : max)) return errors.add(field, `must be at most ${rule.secret ? 1000 : max} characters`);
      if (/[\u0000-\u001f\u007f]/.test(value)) return errors.add(field, 'must not contain control characters');
      return value;
    }
  }
}
