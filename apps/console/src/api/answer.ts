import { fieldErrors, problemText } from './client';

/** The line the console shows when a request got no answer at all. */
export const UNREACHABLE = 'The service could not be reached.';

/**
 * A call that did not succeed, as the console shows it: `message` is the one line (a ProblemDetails' detail or title,
 * else the status; or `UNREACHABLE` when no answer came), `fields` the API's messages by field path.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly fields: Record<string, string[]> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of an `openapi-fetch` call that succeeded (a 2xx), or an `ApiError` thrown: what query and mutation
 * functions return, so TanStack Query holds the data or the error. `unreachable` is the message when no answer came.
 */
export async function answer<T>(call: Promise<Answer<T>>, unreachable = UNREACHABLE): Promise<T> {
  let result: Answer<T>;
  try {
    result = await call;
  } catch {
    throw new ApiError(unreachable);
  }
  if (result.response.ok) return result.data as T;
  throw new ApiError(problemText(result.error, result.response), result.response.status, fieldErrors(result.error));
}

/** The API's messages by field path of a failed call (none for a failure that is not the API's answer). */
export function fieldsOf(error: unknown): Record<string, string[]> {
  return error instanceof ApiError ? error.fields : {};
}

/** The one line to show for a failed call or query (`undefined`: none failed). */
export function messageOf(error: unknown): string | undefined {
  if (error === null || error === undefined) return undefined;
  return error instanceof Error ? error.message : String(error);
}
