import type { INestApplicationContext } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import { AuthenticationThrottle, RateLimiter } from '@gatehouse/domain';

/**
 * The rate limits' and the throttle's counts, read at scrape time: requests refused by a limit, requests let through
 * uncounted because Redis was unreachable (fail open), and requests refused for their address's failed keys.
 */
export function registerRateLimitMetrics(registry: Registry, app: INestApplicationContext): void {
  const limiter = app.get(RateLimiter);
  const throttle = app.get(AuthenticationThrottle);
  new Counter({
    name: 'gatehouse_rate_limit_requests_total',
    help: 'Requests refused by an application or proxy rate limit (outcome="limited"), and requests let through uncounted while Redis was unreachable (outcome="failed_open")',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'limited' }, limiter.stats.limited);
      this.inc({ outcome: 'failed_open' }, limiter.stats.failedOpen);
    },
  });
  new Counter({
    name: 'gatehouse_auth_throttle_requests_total',
    help: 'Requests refused because their address failed to authenticate too often (outcome="throttled"), and failures left uncounted while Redis was unreachable (outcome="uncounted")',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'throttled' }, throttle.stats.throttled);
      this.inc({ outcome: 'uncounted' }, throttle.stats.uncounted);
    },
  });
  new Gauge({
    name: 'gatehouse_auth_throttle_blocked_addresses',
    help: 'Client addresses this process refuses right now for failing to authenticate too often (keys that authenticated from them before are still served)',
    registers: [registry],
    collect() {
      this.set(throttle.blockedAddresses());
    },
  });
}
