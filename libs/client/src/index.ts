import createFetchClient, { type Client } from 'openapi-fetch';
import { retryingFetch, type RetryOptions } from './retry';
import type { components, paths } from './schema.gen';

export type { components, operations, paths } from './schema.gen';
export { retryAfterMs, retryingFetch, type RetryOptions } from './retry';

/** An RFC 7807 error answer of the API (CONTRACT.md section 2). */
export type ProblemDetails = components['schemas']['ProblemDetails'];

/** Thrown by the client's helpers for a non-2xx answer: the status and the typed ProblemDetails. */
export class GatehouseError extends Error {
  constructor(
    readonly status: number,
    readonly problem: ProblemDetails,
  ) {
    super(`${status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ''}`);
    this.name = 'GatehouseError';
  }
}

export interface GatehouseClientOptions {
  /** The API's origin, e.g. `https://gatehouse.example.com`. */
  baseUrl: string;
  /** An application's key, sent as `SVC-API-KEY`. */
  apiKey?: string;
  headers?: Record<string, string>;
  /** Retries of 429 and 503 answers (honouring `Retry-After`). */
  retry?: RetryOptions;
  /** The fetch to send with (default: the global fetch). */
  fetch?: (input: Request) => Promise<Response>;
}

type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type GetOperation<P extends GetPath> = paths[P] extends { get: infer O } ? O : never;
type OkBody<P extends GetPath> = GetOperation<P> extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
/** The list endpoints: a 200 body of `{ data: T[], pagination: { next?: string } }`. */
export type ListPath = { [P in GetPath]: OkBody<P> extends { data: unknown[]; pagination: { next?: string } } ? P : never }[GetPath];
/** One item of a list endpoint. */
export type ListItem<P extends ListPath> = OkBody<P> extends { data: Array<infer T> } ? T : never;
/** A list endpoint's query, without the cursor (the iterator passes it). */
export type ListQuery<P extends ListPath> = Omit<NonNullable<GetOperation<P> extends { parameters: { query?: infer Q } } ? Q : never>, 'start' | 'page'>;

export interface GatehouseClient {
  /** The generated client: every path, parameter, body and answer typed from the OpenAPI document. */
  readonly api: Client<paths>;
  /** The data of a 2xx answer, or a thrown GatehouseError carrying the ProblemDetails. */
  unwrap<T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T>;
  /** Every item of a list endpoint, page after page through `pagination.next` (keyset paging with `start`). */
  paginate<P extends ListPath>(path: P, query?: ListQuery<P>): AsyncGenerator<ListItem<P>, void, undefined>;
}

export function createGatehouseClient(options: GatehouseClientOptions): GatehouseClient {
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...options.headers, ...(options.apiKey ? { 'SVC-API-KEY': options.apiKey } : {}) },
    fetch: retryingFetch(options.retry, options.fetch),
  });
  const unwrap = async <T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> => {
    const { data, error, response } = await result;
    if (response.ok) return data as T;
    throw new GatehouseError(response.status, toProblem(error, response));
  };
  async function* paginate<P extends ListPath>(path: P, query?: ListQuery<P>): AsyncGenerator<ListItem<P>, void, undefined> {
    let start: string | undefined;
    do {
      // The path and query are checked by the signature; openapi-fetch's overloads cannot follow a generic path.
      const get = api.GET as unknown as (p: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      const page = (await unwrap(get(path, { params: { query: { ...query, ...(start === undefined ? {} : { start }) } } }))) as {
        data: Array<ListItem<P>>;
        pagination: { next?: string };
      };
      yield* page.data;
      start = page.data.length > 0 ? page.pagination.next : undefined;
    } while (start !== undefined);
  }
  return { api, unwrap, paginate };
}

function toProblem(error: unknown, response: Response): ProblemDetails {
  if (error && typeof error === 'object' && typeof (error as ProblemDetails).title === 'string') return error as ProblemDetails;
  // Not a ProblemDetails (a proxy in front, an empty body): one made from the status.
  return {
    type: 'about:blank',
    title: response.statusText || `HTTP ${response.status}`,
    status: response.status,
    ...(typeof error === 'string' && error ? { detail: error.slice(0, 200) } : {}),
  };
}
