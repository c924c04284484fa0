import { readFileSync } from 'node:fs';
import { createGatehouseClient, GatehouseClient, GatehouseError } from '@gatehouse/client';
import { CliUsageError } from '../command';
import { applicationFromResponse, MANAGED_APPLICATION_TYPES, proxyFromResponse, TenantState } from './model';

/** One request that the service does not answer in this time fails the command (the client retries 429 and 503 first). */
const REQUEST_TIMEOUT_MS = 60_000;
const API_KEY_PATTERN = /^key_[0-9A-Za-z]{32,}$/;

export interface TenantApi {
  url: string;
  client: GatehouseClient;
}

/** A refused or failed API call, said in one line with what was being done. */
export class ApiCallError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * The service and the management key: `--url`, else GATEHOUSE_URL; `--api-key-file` or `--api-key`, else
 * GATEHOUSE_API_KEY_FILE or GATEHOUSE_API_KEY. A key on the command line is visible to other local users (ps): the
 * file or the environment keep it out of sight.
 */
export function connect(values: Record<string, unknown>, env: NodeJS.ProcessEnv): TenantApi {
  const url = (values.url as string | undefined) ?? env.GATEHOUSE_URL;
  if (!url) throw new CliUsageError('the service is not named: --url URL or GATEHOUSE_URL (e.g. http://localhost:3000)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliUsageError(`--url must be an absolute http:// or https:// URL, not '${url.slice(0, 100)}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new CliUsageError('--url must be an http:// or https:// URL');
  if (values['api-key'] !== undefined && values['api-key-file'] !== undefined) throw new CliUsageError('give one of --api-key and --api-key-file');
  const fromFlag = values['api-key'] as string | undefined;
  const file = (values['api-key-file'] as string | undefined) ?? (fromFlag === undefined ? env.GATEHOUSE_API_KEY_FILE : undefined);
  let key = fromFlag ?? (file === undefined ? env.GATEHOUSE_API_KEY : undefined);
  if (file !== undefined) {
    try {
      key = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new CliUsageError(`the API key file cannot be read: ${(error as Error).message}`);
    }
  }
  if (!key) throw new CliUsageError('no management key: --api-key-file FILE, GATEHOUSE_API_KEY_FILE or GATEHOUSE_API_KEY');
  // Never echoed: a key pasted in the wrong place is still a key.
  if (!API_KEY_PATTERN.test(key)) throw new CliUsageError('the management key is not an API key (key_ and at least 32 letters or digits)');
  const base = parsed.toString().replace(/\/+$/, '');
  const client = createGatehouseClient({
    baseUrl: base,
    apiKey: key,
    fetch: (request) => fetch(request, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
  });
  return { url: base, client };
}

/** The answer's data, or an ApiCallError naming what was being done and why the service refused it. */
export async function call<T>(api: TenantApi, what: string, result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  try {
    return await api.client.unwrap(result);
  } catch (error) {
    throw describeFailure(api, what, error);
  }
}

export function describeFailure(api: TenantApi, what: string, error: unknown): Error {
  if (error instanceof GatehouseError) {
    const { status, problem } = error;
    const fields = problem.errors ? Object.entries(problem.errors).map(([field, messages]) => `${field} ${messages.join(', ')}`) : [];
    const detail = [problem.detail, ...fields].filter(Boolean).join('; ');
    const hint =
      status === 401
        ? ' (the management key was refused: check it, and that it belongs to this service)'
        : status === 403
          ? ' (the management key may not do this: give its application the permission, or use another key)'
          : '';
    return new ApiCallError(`${what}: ${status} ${problem.title.replace(/\.$/, '')}${detail ? `: ${detail}` : ''}${hint}`, status);
  }
  if (error instanceof DOMException && error.name === 'TimeoutError')
    return new ApiCallError(`${what}: ${api.url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (error instanceof TypeError && cause) return new ApiCallError(`${what}: cannot reach ${api.url} (${cause.code ?? cause.message})`);
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * The tenant as the key sees it. Applications are read when `applications` is 'required' (the file manages them, or
 * an export), or else when they can be ('optional': to name the applications proxies are bound to); proxies when
 * `proxies` is true.
 */
export async function readTenant(api: TenantApi, needs: { applications: 'required' | 'optional'; proxies: boolean }): Promise<TenantState> {
  const state: TenantState = {};
  try {
    const self = await call(api, 'identifying the management key', api.client.api.GET('/applications/key'));
    state.tenantId = self.tenant_id;
    state.self = { id: self.id, name: self.name, type: self.type, permissions: new Set(self.permissions) };
  } catch (error) {
    // A key without application:read cannot see itself; what it may do shows when it does it.
    if (!(error instanceof ApiCallError && error.status === 403)) throw error;
  }
  try {
    const applications = [];
    for await (const app of paginate(
      api,
      'reading the applications',
      api.client.paginate('/applications', { size: 100, type: [...MANAGED_APPLICATION_TYPES] }),
    )) {
      applications.push(applicationFromResponse(app));
    }
    state.applications = applications;
  } catch (error) {
    if (needs.applications === 'required' || !(error instanceof ApiCallError && error.status === 403)) throw error;
  }
  if (needs.proxies) {
    const names = new Map((state.applications ?? []).map((app) => [app.id, app.name]));
    state.proxies = [];
    for await (const proxy of paginate(api, 'reading the proxies', api.client.paginate('/proxies', { size: 100 }))) {
      state.proxies.push(proxyFromResponse(proxy, names));
    }
  }
  return state;
}

async function* paginate<T>(api: TenantApi, what: string, items: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* items;
  } catch (error) {
    throw describeFailure(api, what, error);
  }
}
