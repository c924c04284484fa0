/** How the client retries 429 and 503 answers. */
export interface RetryOptions {
  /** Further attempts after the first (default 3; 0: never retry). */
  retries?: number;
  /** Longest wait before one retry, in ms, whatever `Retry-After` asks (default 30,000); a longer ask is not retried. */
  maxDelayMs?: number;
  /** Wait when the answer has no usable `Retry-After`: doubled on each attempt from this (default 500 ms). */
  baseDelayMs?: number;
  /** Called before each retry (logging, tests). */
  onRetry?: (info: { attempt: number; status: number; delayMs: number; url: string }) => void;
}

const RETRIED = new Set([429, 503]);

/** The wait `Retry-After` asks for (delta-seconds or an HTTP date), in ms; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A fetch that sends a request again when it is answered 429 or 503, after the server's `Retry-After` (or a
 * doubling back-off), at most `retries` times and never waiting longer than `maxDelayMs` at once.
 */
export function retryingFetch(
  options: RetryOptions = {},
  base: (input: Request) => Promise<Response> = (input) => fetch(input),
): (input: Request) => Promise<Response> {
  const retries = Math.max(0, options.retries ?? 3);
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      // The body of a Request can be read once: each attempt sends a copy.
      const response = await base(attempt < retries ? request.clone() : request);
      if (!RETRIED.has(response.status) || attempt >= retries) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      const delayMs = asked ?? baseDelayMs * 2 ** attempt;
      if (delayMs > maxDelayMs) return response;
      await response.body?.cancel();
      options.onRetry?.({ attempt: attempt + 1, status: response.status, delayMs, url: request.url });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  };
}
