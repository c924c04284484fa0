import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { currentRequestId } from './request-context';

/** One JSON object per line on stdout, each carrying the request id of the request it belongs to. */
export function createRootLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'gatehouse' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const requestId = currentRequestId();
        return requestId ? { request_id: requestId } : {};
      },
    },
    destination,
  );
}

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
