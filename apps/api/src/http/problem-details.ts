import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { DomainError, DomainErrorCode, FieldErrors, TooManyRequestsError } from '@gatehouse/domain';
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

// SQLSTATE class 22, data exception: a NUL in text, an unencodable character, a value out of range.
const DATA_EXCEPTION = /^22[0-9A-Z]{3}$/;
// Connection-level failures of PostgreSQL (and the pool) mean the dependency is down, not a bug.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300']);

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

/** The one place where failures become responses: domain codes, framework errors, and everything else as a 500. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    noteFailure(host.switchToHttp().getRequest(), exception);
    this.send(host.switchToHttp().getResponse<Response>(), exception);
  }

  /** The problem of `exception` with the headers it calls for (Retry-After on a 429). */
  send(res: Response, exception: unknown): void {
    const headers: Record<string, string> =
      exception instanceof TooManyRequestsError ? { 'retry-after': String(exception.retryAfterSeconds) } : {};
    sendProblem(res, this.toProblem(exception), headers);
  }

  toProblem(exception: unknown): ProblemDetails {
    if (exception instanceof DomainError) {
      return problem(STATUS_OF[exception.code], exception.fieldErrors ? undefined : exception.message, exception.fieldErrors);
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
    const code = (exception as { code?: unknown })?.code;
    if (typeof code === 'string' && DATA_EXCEPTION.test(code)) {
      // A value no validator caught that PostgreSQL refuses to store is still the request's fault, not a 500.
      this.logger.warn(`database refused a request value: ${code}`);
      return problem(400, 'A value in the request cannot be stored');
    }
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) {
      this.logger.error(`dependency unavailable: ${code}`);
      return problem(503, 'A dependency is unavailable; retry later');
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
