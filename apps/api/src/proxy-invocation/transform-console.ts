import type { LoggerService } from '@nestjs/common';
import type { Proxy } from '@gatehouse/domain';

/** Characters of one run's console output kept in the service log; the rest is cut. */
export const TRANSFORM_CONSOLE_MAX_CHARS = 2048;
/** Runs whose console output is logged per second per process; beyond that they are counted, not written. */
export const TRANSFORM_CONSOLE_MAX_PER_SECOND = 10;

/**
 * Where transforms' `console` output goes. It is the tenant's data (a transform may print a card number, a
 * header or a configuration secret), so by default it goes nowhere; an operator who turns it on
 * (TRANSFORM_CONSOLE_LOG=true) gets it bounded in size and rate, so a chatty or hostile transform cannot flood
 * the service's logs.
 */
export class TransformConsole {
  private windowStart = 0;
  private writtenInWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly enabled: boolean,
    private readonly logger: LoggerService,
    private readonly now: () => number = Date.now,
  ) {}

  write(proxy: Proxy, direction: 'request' | 'response', lines: readonly string[]): void {
    if (!this.enabled || lines.length === 0) return;
    const now = this.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.writtenInWindow = 0;
    }
    if (this.writtenInWindow >= TRANSFORM_CONSOLE_MAX_PER_SECOND) {
      this.suppressed++;
      return;
    }
    this.writtenInWindow++;
    let text = lines.join('\n');
    if (text.length > TRANSFORM_CONSOLE_MAX_CHARS)
      text = `${text.slice(0, TRANSFORM_CONSOLE_MAX_CHARS)}... (${text.length - TRANSFORM_CONSOLE_MAX_CHARS} more characters cut)`;
    const dropped = this.suppressed > 0 ? ` [${this.suppressed} earlier run(s) not logged: rate limit]` : '';
    this.suppressed = 0;
    this.logger.log(`${direction} transform of proxy ${proxy.id} (tenant ${proxy.tenantId}) printed${dropped}:\n${text}`);
  }
}
