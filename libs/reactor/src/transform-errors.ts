import { PROXY_ERROR_STATUSES, proxyErrorBody, type ProxyErrorName } from './transform-contract';
import type { TransformResult } from './transform-types';

export { PROXY_ERROR_STATUSES, type ProxyErrorName } from './transform-contract';

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

/** A result the host produces itself (timeout, out of memory, saturation), shaped like a thrown error's. */
export function proxyErrorResult(name: ProxyErrorName, detail: string, logs: string[] = []): Extract<TransformResult, { ok: false }> {
  const status = PROXY_ERROR_STATUSES[name];
  return { ok: false, status, headers: {}, body: proxyErrorBody({ title: name, status, detail }), logs };
}
