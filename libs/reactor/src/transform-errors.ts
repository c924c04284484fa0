import type { TransformResult } from './transform-types';

/** Transform code that does not compile (or is too long); line and column are 1-based. */
export class ReactorCompileError extends Error {
  override readonly name = 'ReactorCompileError';

  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

/** The error classes a transform may throw (sandbox globals), and the status each answers with. */
export const PROXY_ERROR_STATUSES = {
  AuthenticationError: 401,
  AuthorizationError: 403,
  BadRequestError: 400,
  InvalidPaymentMethodError: 402,
  InvalidReactorConfigurationError: 400,
  RateLimitError: 429,
  ReactorRuntimeError: 500,
  ServiceUnavailableError: 503,
  UnprocessableEntityError: 422,
} as const;

export type ProxyErrorName = keyof typeof PROXY_ERROR_STATUSES;

/** A result the host produces itself (timeout, out of memory, saturation), shaped like a thrown error's. */
export function proxyErrorResult(name: ProxyErrorName, detail: string, logs: string[] = []): Extract<TransformResult, { ok: false }> {
  const status = PROXY_ERROR_STATUSES[name];
  return {
    ok: false,
    status,
    headers: {},
    body: { proxy_error: { title: name, status, detail, errors: {} } },
    logs,
  };
}
