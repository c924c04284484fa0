import { isIP } from 'node:net';

/**
 * Configuration values that cannot be used: one problem a line, each naming its variable and never echoing a
 * secret's value. `loadConfig` collects every problem of the environment before it throws, so an operator fixes
 * them all in one round.
 */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : [...problems];
    super(list.join('\n'));
    this.problems = list;
  }
}

/** The members parsed so far (the schema's order), for a bound or a default that depends on another variable. */
export type Parsed = Readonly<Record<string, unknown>>;

/** What a kind knows of the variable it parses. */
export interface ParseContext {
  readonly name: string;
  /** `, got '<value>'`, or nothing when the variable is a secret: a secret's value is never echoed, not even in part. */
  got(value: string): string;
  readonly parsed: Parsed;
}

/** How a variable's text becomes a value: `parse` gets the trimmed, non-blank text and throws a ConfigError. */
export interface Kind<T> {
  parse(raw: string, context: ParseContext): T;
  /** The value when unset or blank: a constant (the docs show it), or computed from the members parsed before. */
  readonly fallback?: T | ((parsed: Parsed) => T);
}

/**
 * Which process reads it: `worker` includes the api when it runs the jobs itself (no REDIS_URL); `cli`: only the
 * `gatehouse` CLI (which reads the database's and the vault's variables too, as the service does).
 */
export type Reader = 'api' | 'worker' | 'both' | 'cli';

export const GROUPS = {
  listeners: 'Listeners and origins',
  storage: 'Database and queue',
  keys: 'Keys, secrets and log signing',
  auditLogs: 'Audit logs: checkpoints, retention, partitions and streams',
  proxies: 'Proxies and authentication',
  reactor: 'Transforms (the reactor)',
  observability: 'Logs, metrics and tracing',
  cli: 'The CLI (gatehouse apply, diff, export)',
} as const;

export interface Variable<K extends string = string, T = unknown> {
  readonly name: string;
  /** The AppConfig member it sets; none for one only checked here, or only documented (its reader reads it itself). */
  readonly key?: K;
  readonly group: keyof typeof GROUPS;
  readonly readBy: Reader;
  /** One line of Markdown: the README's table shows it as is, `.env.example` as plain text. */
  readonly meaning: string;
  /** How it is parsed and what unset means; none: documented only. */
  readonly kind?: Kind<T>;
  /** Never echoed in an error, and shown empty in `.env.example`. */
  readonly secret?: boolean;
  /** `<NAME>_FILE` may name a file holding the value instead (Docker and Kubernetes secrets). */
  readonly fromFile?: boolean;
  /** The docs' default (Markdown) where it is not one constant of the kind: computed, or what unset means. */
  readonly shownDefault?: string;
  /** A value `.env.example` shows (commented out) where there is no constant default; never for a secret. */
  readonly example?: string;
}

/** Keeps a variable's member name and value type for AppConfig (a variable without a key adds no member). */
export function variable<K extends string = never, T = never>(spec: Variable<K, T>): Variable<K, T> {
  return spec;
}

/** A rule over several variables, checked once each of them parsed. */
export interface Check {
  /** Variables it reads: skipped when one of them is already reported. */
  readonly of: readonly string[];
  problem(parsed: Parsed, given: (name: string) => boolean): string | undefined;
}

type Bound = number | ((parsed: Parsed) => number);

export function integer(min: number, max: Bound): Kind<number | undefined>;
export function integer(min: number, max: Bound, fallback: number | ((parsed: Parsed) => number)): Kind<number>;
export function integer(min: number, max: Bound, fallback?: number | ((parsed: Parsed) => number)): Kind<number | undefined> {
  return {
    fallback,
    parse(raw, { name, got, parsed }) {
      const top = typeof max === 'function' ? max(parsed) : max;
      if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > top) throw new ConfigError(`${name} must be an integer from ${min} to ${top}${got(raw)}`);
      return Number(raw);
    },
  };
}

/**
 * Ed25519 public keys, each the 32 raw bytes as base64 or hex, separated by commas or white space (LOG_SIGNING_RETIRED_KEYS);
 * none: an empty list.
 */
export function publicKeyList(): Kind<string[]> {
  return {
    fallback: [],
    parse(raw, { name }) {
      const keys = raw.split(/[\s,]+/).filter((k) => k.length > 0);
      for (const [i, key] of keys.entries()) {
        const bytes = /^[0-9a-f]{64}$/i.test(key) ? 32 : /^[A-Za-z0-9+/]{43}=$/.test(key) ? 32 : 0;
        if (bytes !== 32)
          throw new ConfigError(`${name} must list Ed25519 public keys (32 bytes as base64 or hex, separated by commas): entry ${i + 1} is not one`);
      }
      return keys;
    },
  };
}

/** A port, or `off` (any case) for none: undefined. */
export function portOrOff(fallback: number): Kind<number | undefined> {
  const port = integer(0, 65535);
  return { fallback, parse: (raw, context) => (raw.toLowerCase() === 'off' ? undefined : port.parse(raw, context)) };
}

export function boolean(fallback: boolean): Kind<boolean> {
  return {
    fallback,
    parse(raw, { name, got }) {
      const value = raw.toLowerCase();
      if (['true', '1', 'yes'].includes(value)) return true;
      if (['false', '0', 'no'].includes(value)) return false;
      throw new ConfigError(`${name} must be true or false${got(value)}`);
    },
  };
}

/** One of `allowed`; `caseInsensitive` as the OpenTelemetry specification has its enumerations read. */
export function oneOf<T extends string>(allowed: readonly T[], fallback: T, caseInsensitive = false): Kind<T> {
  return {
    fallback,
    parse(raw, { name, got }) {
      const value = caseInsensitive ? raw.toLowerCase() : raw;
      if (!allowed.includes(value as T)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}${got(value)}`);
      return value as T;
    },
  };
}

/** A URL of one of `protocols`; only its scheme is ever echoed (the rest may hold credentials). */
export function url(protocols: string[]): Kind<string | undefined> {
  return {
    parse(raw, { name }) {
      let parsed: URL;
      try {
        parsed = new URL(raw);
      } catch {
        throw new ConfigError(`${name} must be a URL (${protocols.join(' or ')}//...)`);
      }
      if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got '${parsed.protocol}'`);
      return raw;
    },
  };
}

/** An http(s) origin (scheme, host, port; nothing after the host but `/`), normalised (`https://h:443/` -> `https://h`). */
export function origin(): Kind<string | undefined> {
  const web = url(['http:', 'https:']);
  return {
    parse(raw, context) {
      const parsed = new URL(web.parse(raw, context)!);
      // The origin goes into headers (a CSP, a Location) and a page: a host of letters, digits, dots, dashes, an IPv6 in [].
      if (
        !/^[A-Za-z0-9.\-[\]:]+$/.test(parsed.host) ||
        parsed.pathname !== '/' ||
        parsed.search !== '' ||
        parsed.hash !== '' ||
        parsed.username !== '' ||
        parsed.password !== ''
      ) {
        // Not echoed: it may carry credentials.
        throw new ConfigError(`${context.name} must be an origin such as https://console.example.com: no path, query, fragment or credentials`);
      }
      return parsed.origin;
    },
  };
}

/** Comma-separated CIDR ranges; unset: none. */
export function cidrs(): Kind<string[]> {
  return {
    fallback: [],
    parse(raw, { name, got }) {
      return raw.split(',').map((part) => {
        const cidr = part.trim();
        const [address, bits, ...rest] = cidr.split('/');
        const family = isIP(address ?? '');
        const max = family === 6 ? 128 : 32;
        if (rest.length > 0 || family === 0 || bits === undefined || !/^\d+$/.test(bits) || Number(bits) > max) {
          throw new ConfigError(`${name} must be a comma-separated list of CIDR ranges such as 127.0.0.0/8,::1/128${got(cidr)}`);
        }
        return cidr;
      });
    },
  };
}

export function matching(allowed: RegExp, fallback: string): Kind<string> {
  return {
    fallback,
    parse(raw, { name, got }) {
      if (!allowed.test(raw)) throw new ConfigError(`${name} must match ${allowed.source}${got(raw)}`);
      return raw;
    },
  };
}

/** An address to listen on: an IPv4 or IPv6 literal (`0.0.0.0`, `::` for every interface) or a host name. */
export function listenHost(fallback: string): Kind<string> {
  return {
    fallback,
    parse(raw, { name, got }) {
      if (isIP(raw) === 0 && !/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(raw)) {
        throw new ConfigError(`${name} must be an IP address (0.0.0.0 or :: for every interface) or a host name${got(raw)}`);
      }
      return raw;
    },
  };
}

/** Any text (a path, a name). */
export function text(): Kind<string | undefined>;
export function text(fallback: string): Kind<string>;
export function text(fallback?: string): Kind<string | undefined> {
  return { fallback, parse: (raw) => raw };
}

/** A number from 0 to 1 (OTEL_TRACES_SAMPLER_ARG). */
export function ratio(fallback: number): Kind<number> {
  return {
    fallback,
    parse(raw, { name, got }) {
      if (!(/^\d*\.?\d+$/.test(raw) && Number(raw) <= 1)) throw new ConfigError(`${name} must be a ratio from 0 to 1${got(raw)}`);
      return Number(raw);
    },
  };
}

/**
 * A secret that `check` accepts (it throws otherwise), kept as given. The message says what is expected, never what
 * was given; `label` names the variable in it when that is not just its name (`NAME(_FILE)`).
 */
export function secret(check: (value: string) => unknown, requirement: string, label?: string): Kind<string | undefined> {
  return {
    parse(raw, { name }) {
      try {
        check(raw);
      } catch {
        throw new ConfigError(`${label ?? name} ${requirement}`);
      }
      return raw;
    },
  };
}
