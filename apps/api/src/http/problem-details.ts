import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError, DomainErrorCode, FieldErrors, InvalidDataError, TooManyRequestsError, UnavailableError } from '@gatehouse/domain';
import { noteFailure } from './access-log';
import { currentRequestId } from './request-context';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: FieldErrors;
}

const STATUS_OF: Record<DomainErrorCode, number> = {
  validation: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

// What a client is told of a failure that is not its own, whatever the error says for the logs.
const FIXED_DETAIL: Partial<Record<DomainErrorCode, string>> = {
  unavailable: 'A dependency is unavailable; retry later',
};

/**
 * When a client should retry after a dependency failed: a PostgreSQL restart or failover usually completes within
 * seconds, and the pool reconnects on the next request.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export function problem(status: number, detail?: string, errors?: FieldErrors): ProblemDetails {
  const title = errors ? 'One or more validation errors occurred.' : (TITLES[status] ?? 'Error');
  return {
    type: `https://gatehouse.dev/problems/${status}`,
    title,
    status,
    ...(detail ? { detail } : {}),
    instance: currentRequestId(),
    ...(errors ? { errors } : {}),
  };
}

export function sendProblem(res: Response, body: ProblemDetails, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(body.status).type('application/problem+json').send(JSON.stringify(body));
}

/**
 * The one place where failures become responses: domain codes (the adapters translate their drivers' errors into
 * them, e.g. libs/persistence/src/database-errors.ts), framework errors, and everything else as a 500.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    noteFailure(host.switchToHttp().getRequest(), exception);
    this.send(host.switchToHttp().getResponse<Response>(), exception);
  }

  /** The problem of `exception` with the headers it calls for (Retry-After on a 429 and on a 503). */
  send(res: Response, exception: unknown): void {
    const body = this.toProblem(exception);
    const headers: Record<string, string> =
      exception instanceof TooManyRequestsError
        ? { 'retry-after': String(exception.retryAfterSeconds) }
        : body.status === 503
          ? { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }
          : {};
    sendProblem(res, body, headers);
  }

  toProblem(exception: unknown): ProblemDetails {
    if (exception instanceof DomainError) {
      if (exception instanceof InvalidDataError) this.logger.warn(`database refused a request value: ${exception.reason}`);
      if (exception instanceof UnavailableError) this.logger.error(`dependency unavailable: ${exception.reason}`);
      const detail = FIXED_DETAIL[exception.code] ?? (exception.fieldErrors ? undefined : exception.message);
      return problem(STATUS_OF[exception.code], detail, exception.fieldErrors);
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      const message = typeof response === 'object' && response && 'message' in response ? (response as { message: unknown }).message : undefined;
      return problem(status, typeof message === 'string' && status < 500 ? message : undefined);
    }
    const bodyParserStatus = bodyParserErrorStatus(exception);
    if (bodyParserStatus) {
      return problem(bodyParserStatus, bodyParserStatus === 413 ? 'The request body is too large' : 'The request body is not valid JSON');
    }
    this.logger.error(exception instanceof Error ? exception.message : String(exception), exception instanceof Error ? exception.stack : undefined);
    return problem(500, 'An unexpected error occurred; quote the instance when reporting it');
  }
}

function bodyParserErrorStatus(exception: unknown): number | undefined {
  const type = (exception as { type?: unknown })?.type;
  if (type === 'entity.too.large') return 413;
  if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported' || type === 'request.aborted') return 400;
  return undefined;
}
