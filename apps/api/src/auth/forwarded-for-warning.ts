import type { IncomingMessage } from 'node:http';
import { Logger } from '@nestjs/common';

/**
 * Without TRUSTED_PROXIES every client is its TCP peer. Behind a load balancer that peer is the balancer, for everyone:
 * the failed-authentication throttle then counts every client as one, and one guesser blocks the address of all (they
 * keep the keys they used before, see AuthenticationThrottle, but new ones are refused while it lasts). A request
 * carrying X-Forwarded-For says that such a hop exists; the first one is worth one warning, once per process.
 */
export class ForwardedForWarning {
  private pending: boolean;

  constructor(
    trustedProxies: readonly string[],
    private readonly logger: Pick<Logger, 'warn'> = new Logger('Authentication'),
  ) {
    this.pending = trustedProxies.length === 0;
  }

  /** One boolean per request once warned (or with trusted proxies set). */
  observe(req: IncomingMessage): void {
    if (!this.pending || req.headers['x-forwarded-for'] === undefined) return;
    this.pending = false;
    this.logger.warn(
      "Requests arrive with X-Forwarded-For but TRUSTED_PROXIES is empty: every client behind that proxy has its address, so the failed-authentication throttle and the audit logs see them as one client; set TRUSTED_PROXIES to the proxy's addresses",
    );
  }
}
