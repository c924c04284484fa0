import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/**
 * One JSON object per line on stdout. `mixin` adds fields to every line (the api adds the request id of
 * the request a line belongs to).
 *
 * stdout is written in batches: with an access line per request, one write() per line (synchronous or not) was
 * the largest cost of logging (bench:observability). Lines leave once 4 KiB have gathered and at the latest
 * FLUSH_INTERVAL_MS later; pino writes what is left synchronously when the process exits, whatever the reason.
 */
export function createJsonRootLogger(
  level: string,
  destination?: pino.DestinationStream,
  mixin: () => Record<string, unknown> = () => ({}),
  service = 'gatehouse',
): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin,
    },
    destination ?? batchedStdout(),
  );
}

const FLUSH_INTERVAL_MS = 200;

function batchedStdout(): pino.DestinationStream {
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => {
    try {
      stdout.flush();
    } catch {
      // stdout is gone (closed under us): nothing can be written any more.
    }
  }, FLUSH_INTERVAL_MS).unref();
  return stdout;
}

/** Nest's logger interface over pino, so framework and application lines are the same JSON. */
export class JsonLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, stringify(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, stringify(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, stringify(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, stringify(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, stringify(message));
  }
  fatal(message: unknown, context?: string): void {
    this.logger.fatal({ context }, stringify(message));
  }
}

function stringify(message: unknown): string {
  return typeof message === 'string' ? message : JSON.stringify(message);
}
