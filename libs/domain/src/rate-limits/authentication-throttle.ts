import { Clock } from '../shared/clock';
import { DomainError, TooManyRequestsError } from '../shared/domain-error';
import { RateCounter, RateLimit } from './rate-counter';

const MAX_REMEMBERED = 100_000;
/**
 * How many credentials that authenticated are remembered, from how many addresses each, and for how long; each pair
 * is refreshed at most once a minute (so a busy key costs two map reads per request).
 */
const MAX_KNOWN = 100_000;
const MAX_ADDRESSES_PER_CREDENTIAL = 16;
const KNOWN_FOR_MS = 24 * 3600_000;
const KNOWN_REFRESH_MS = 60_000;

/** A client's address (undefined: unknown, never throttled), or a function that works it out when it is needed. */
export type ClientAddress = string | undefined | (() => string | undefined);

/** How many throttled requests and fail-open counts there were, for metrics. */
export interface ThrottleStats {
  /** Requests answered 429 because their address failed too often. */
  throttled: number;
  /** Failures that could not be counted (the counter was unreachable) and were let through as plain failures. */
  uncounted: number;
}

/**
 * Throttles guessing of keys (API keys and proxy keys alike): failed authentications are counted per client address
 * in the shared RateCounter, and past `policy` the address's failures are answered 429 with Retry-After. A successful
 * authentication never reaches the counter, so real keys pay nothing. Once this process has learnt that an address
 * is over its limit it refuses it in `check`, before any lookup, so a blocked guesser costs no database work; another
 * replica learns it from its own next failure of that address (one more lookup at most), since counts are shared.
 *
 * **Blocking a guesser does not lock out its neighbours.** Behind a load balancer without TRUSTED_PROXIES, or a shared
 * NAT, every client has the guesser's address. So while an address is blocked, a credential that authenticated from
 * that address before (remembered by `succeeded`, in this process, for a day) is still looked up and served; any other
 * is refused unseen. The guesser gains nothing: a new guess is refused whether it is right or not (no oracle, no
 * lookup), and a right one could only be a key already in use from there. As device cookies do for passwords (OWASP).
 */
export class AuthenticationThrottle {
  /** Address -> until when it is refused (epoch ms), as far as this process knows. */
  private readonly blocked = new Map<string, number>();
  /** Credential (a hash) -> address -> when it last authenticated from there (epoch ms); oldest refreshed first. */
  private readonly known = new Map<string, Map<string, number>>();
  readonly stats: ThrottleStats = { throttled: 0, uncounted: 0 };

  constructor(
    private readonly counter: RateCounter,
    /** null: no throttling. */
    readonly policy: RateLimit | null,
    private readonly clock: Clock,
  ) {}

  /**
   * Before looking a credential up: refuses an address known to be over its limit, unless `credential` (a hash of the
   * key presented) authenticated from that address before. `client` undefined: not throttled.
   */
  check(address: ClientAddress, credential?: string | (() => string)): void {
    // Nothing blocked (the usual case): the address is not even worked out.
    if (this.policy === null || this.blocked.size === 0) return;
    const client = typeof address === 'function' ? address() : address;
    if (client === undefined) return;
    const until = this.blocked.get(client);
    if (until === undefined) return;
    const now = this.clock.now().getTime();
    const left = until - now;
    if (left <= 0) {
      this.blocked.delete(client);
      return;
    }
    if (credential !== undefined) {
      const seen = this.known.get(typeof credential === 'function' ? credential() : credential)?.get(client);
      if (seen !== undefined && now - seen < KNOWN_FOR_MS) return;
    }
    this.stats.throttled++;
    throw tooMany(Math.ceil(left / 1000));
  }

  /** A credential (a hash of it) authenticated from `address`: served from there even while the address is blocked. */
  succeeded(address: ClientAddress, credential: string): void {
    if (this.policy === null) return;
    const client = typeof address === 'function' ? address() : address;
    if (client === undefined) return;
    const now = this.clock.now().getTime();
    let addresses = this.known.get(credential);
    const seen = addresses?.get(client);
    if (seen !== undefined && now - seen < KNOWN_REFRESH_MS) return;
    // Re-inserted at each refresh, so both maps stay ordered by last refresh and the oldest go first.
    if (addresses) this.known.delete(credential);
    else addresses = new Map();
    if (this.known.size >= MAX_KNOWN) this.known.delete(this.known.keys().next().value as string);
    this.known.set(credential, addresses);
    addresses.delete(client);
    if (addresses.size >= MAX_ADDRESSES_PER_CREDENTIAL) addresses.delete(addresses.keys().next().value as string);
    addresses.set(client, now);
  }

  /** Addresses this process refuses right now (for metrics). */
  blockedAddresses(): number {
    const now = this.clock.now().getTime();
    let count = 0;
    for (const until of this.blocked.values()) if (until > now) count++;
    return count;
  }

  /** Counts a failed authentication of `client`, then throws `error`, or a 429 when this failure is one too many. */
  async fail(address: ClientAddress, error: DomainError): Promise<never> {
    const client = typeof address === 'function' ? address() : address;
    if (client === undefined || this.policy === null) throw error;
    const decision = await this.counter.take([{ key: `auth-failures:${client}`, limit: this.policy }]);
    if (decision === null) {
      this.stats.uncounted++;
      throw error;
    }
    if (decision.allowed) throw error;
    this.remember(client, this.clock.now().getTime() + decision.retryAfterSeconds * 1000);
    this.stats.throttled++;
    throw tooMany(decision.retryAfterSeconds);
  }

  private remember(client: string, until: number): void {
    if (this.blocked.size >= MAX_REMEMBERED) {
      const now = this.clock.now().getTime();
      for (const [address, at] of this.blocked) if (at <= now) this.blocked.delete(address);
      // Still full: forget the oldest; it is refused again after its next counted failure.
      if (this.blocked.size >= MAX_REMEMBERED) this.blocked.delete(this.blocked.keys().next().value as string);
    }
    this.blocked.set(client, until);
  }
}

function tooMany(retryAfterSeconds: number): TooManyRequestsError {
  return new TooManyRequestsError('Too many failed authentications from this address; retry later', retryAfterSeconds);
}
