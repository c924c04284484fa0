import { DynamicModule, Global, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { AuthenticationThrottle, Clock, InMemoryRateCounter, RateCounter, RateLimiter } from '@gatehouse/domain';
import { RedisRateCounter } from '@gatehouse/persistence';
import { ForwardedForWarning } from '../auth/forwarded-for-warning';
import { AppConfig } from '@gatehouse/config';

const WARNING_INTERVAL_MS = 10_000;

/** Closes the Redis connection of the counter when the app stops. */
@Injectable()
class RateCounterShutdown implements OnApplicationShutdown {
  constructor(@Inject(RateCounter) private readonly counter: RateCounter) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.counter instanceof RedisRateCounter) await this.counter.close();
  }
}

/**
 * What authentication keeps count of: the one counting mechanism (RateCounter: Redis with REDIS_URL, else in memory)
 * with the failed-authentication throttle and the rate limits of applications and proxies.
 * Global, because the guard and the /proxy data plane both authenticate and both enforce limits.
 */
@Global()
@Module({})
export class RateLimitsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: RateLimitsModule,
      providers: [
        {
          provide: RateCounter,
          inject: [Clock],
          useFactory: (clock: Clock) =>
            config.redisUrl ? new RedisRateCounter(config.redisUrl, config.queuePrefix, unavailableWarning()) : new InMemoryRateCounter(clock),
        },
        {
          provide: AuthenticationThrottle,
          inject: [RateCounter, Clock],
          useFactory: (counter: RateCounter, clock: Clock) =>
            new AuthenticationThrottle(
              counter,
              config.authThrottleLimit > 0 ? { limit: config.authThrottleLimit, windowSeconds: config.authThrottleWindowSeconds } : null,
              clock,
            ),
        },
        { provide: RateLimiter, inject: [RateCounter], useFactory: (counter: RateCounter) => new RateLimiter(counter) },
        RateCounterShutdown,
        { provide: ForwardedForWarning, useFactory: () => new ForwardedForWarning(config.trustedProxies) },
      ],
      exports: [RateCounter, AuthenticationThrottle, RateLimiter, ForwardedForWarning],
    };
  }
}

/** One warning per 10 s while Redis stays unreachable, not one per request. */
function unavailableWarning(): (error: unknown) => void {
  const logger = new Logger('RateLimits');
  let last = 0;
  let missed = 0;
  return (error) => {
    missed++;
    const now = Date.now();
    if (now - last < WARNING_INTERVAL_MS) return;
    last = now;
    logger.warn(
      `Redis is unreachable: rate limits and the failed-authentication throttle let requests through (fail open); ${missed} request(s) uncounted since the last warning: ${error instanceof Error ? error.message : String(error)}`,
    );
    missed = 0;
  };
}
