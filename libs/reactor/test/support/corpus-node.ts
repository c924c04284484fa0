import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { SvcBridge } from '../../src';

/**
 * Runs a corpus transform in plain Node with the real packages, as the platform's Node runtime would: the same module
 * wrapper, the platform's error classes (written here after its documented behaviour) for `@gatehouse/reactor-errors`,
 * and the outcome mapped by the rules the sandbox follows.
 */
const nodeRequire = createRequire(join(__dirname, '..', '..', '..', '..', 'package.json'));

const TITLE = 'One or more validation errors occurred.';
const FALLBACK = 'Something went wrong. Please try again.';

function sanitize(errors: unknown): Record<string, string[]> {
  const each = (list: unknown[]) => list.map((e) => (typeof e === 'object' && e !== null ? JSON.stringify(e) : e == null ? FALLBACK : String(e)));
  if (Array.isArray(errors)) return { error: each(errors) };
  if (errors instanceof Error) return { error: [errors.message || (errors.name !== 'Error' ? errors.name : FALLBACK)] };
  if (errors !== null && typeof errors === 'object') {
    const out: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(errors))
      out[k] = Array.isArray(v) ? each(v) : typeof v === 'object' && v !== null ? [JSON.stringify(v)] : [v ? String(v) : FALLBACK];
    return out;
  }
  if (typeof errors === 'string') return { error: [errors] };
  return { error: [errors ? String(errors) : FALLBACK] };
}

class ReactorError extends Error {
  constructor(
    message: string,
    readonly status: number,
    errors: unknown,
    readonly errors2 = sanitize(errors),
  ) {
    super(message);
  }
}
const SPECS: Array<[string, number, string]> = [
  ['AuthenticationError', 401, 'Authentication Failed'],
  ['AuthorizationError', 403, 'Forbidden'],
  ['BadRequestError', 400, 'Bad Request'],
  ['InvalidPaymentMethodError', 402, 'Invalid Payment Method'],
  ['RateLimitError', 429, 'Rate Limit Exceeded'],
  ['ReactorRuntimeError', 500, 'Reactor Runtime Error'],
];
const errorsModule: Record<string, unknown> = {};
for (const [name, status, message] of SPECS) {
  errorsModule[name] = {
    [name]: class extends ReactorError {
      constructor(errors?: unknown) {
        super(message, status, errors);
      }
    },
  }[name];
}
class CustomHttpResponseError extends Error {
  constructor(readonly response: { status: number; headers?: Record<string, unknown>; body?: unknown }) {
    super('custom');
  }
}
errorsModule.CustomHttpResponseError = CustomHttpResponseError;

export interface Outcome {
  ok: boolean;
  status?: number;
  headers: Record<string, string>;
  body: unknown;
}

function stringHeaders(h: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((h ?? {}) as Record<string, unknown>))
    if (['string', 'number', 'boolean', 'bigint'].includes(typeof v)) out[k] = String(v);
  return out;
}

export async function runInNode(code: string, args: Record<string, unknown>, configuration: Record<string, string>, svc: unknown): Promise<Outcome> {
  const module = { exports: {} as unknown };
  const req = (name: string) => (name === '@gatehouse/reactor-errors' ? errorsModule : nodeRequire(name));
  try {
    // The transform, its input and its packages in one realm (packages test `instanceof Object`): the test's own.
    new Function('module', 'exports', 'require', code)(module, module.exports, req);
    const input = JSON.parse(JSON.stringify({ args, configuration })) as { args: unknown; configuration: unknown };
    const result = (await (module.exports as (r: unknown) => unknown)({ ...input, svc })) as { status?: number; headers?: unknown; body?: unknown };
    const out: Outcome = { ok: true, body: JSON.parse(JSON.stringify(result.body ?? null)), headers: stringHeaders(result.headers) };
    if (result.status !== undefined) out.status = result.status;
    return out;
  } catch (e) {
    if (e instanceof CustomHttpResponseError)
      return { ok: false, status: e.response.status, headers: stringHeaders(e.response.headers), body: e.response.body ?? {} };
    if (e instanceof ReactorError)
      return { ok: false, status: e.status, headers: {}, body: { proxy_error: { title: TITLE, status: e.status, detail: e.message, errors: e.errors2 } } };
    return {
      ok: false,
      status: 500,
      headers: {},
      body: { proxy_error: { title: 'ReactorRuntimeError', status: 500, detail: (e as Error).message, errors: {} } },
    };
  }
}

/** Inputs a fixture cannot carry as constants (keys, signatures over them), made here once. */
export function prepared(
  kind: string | undefined,
  args: Record<string, unknown>,
  configuration: Record<string, string>,
): { args: Record<string, unknown>; configuration: Record<string, string> } {
  const a = structuredClone(args);
  const c = { ...configuration };
  const headers = (a.headers ?? {}) as Record<string, string>;
  const rsa = () =>
    generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
  if (kind === 'rsaPem') {
    const { publicKey, privateKey } = rsa();
    c.LITHIC_PUB_KEY = Buffer.from(publicKey).toString('base64');
    c.TEST_PRIVATE_KEY = privateKey;
  } else if (kind === 'rsaPemOnly') {
    c.SIGNING_KEY = rsa().privateKey;
  } else if (kind === 'jws') {
    const { publicKey, privateKey } = rsa();
    c.PUBLIC_KEY_PEM = publicKey;
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const input = `${part({ alg: 'RS256' })}.${part({ sub: 'caller-1' })}`;
    headers.Authorization = `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
  } else if (kind === 'twilio') {
    const twilio = nodeRequire('twilio') as { getExpectedTwilioSignature(t: string, u: string, p: unknown): string };
    headers['X-Twilio-Signature'] = twilio.getExpectedTwilioSignature(c.TWILIO_AUTH_TOKEN!, 'https://example.com/sms', a.body);
  } else if (kind === 'stripe') {
    const t = Math.floor(Date.now() / 1000);
    headers['stripe-signature'] = `t=${t},v1=${createHmac('sha256', c.WHSEC!)
      .update(`${t}.${String(a.body)}`)
      .digest('hex')}`;
  }
  a.headers = headers;
  return { args: a, configuration: c };
}

/** The svc a transform of the platform gets, stubbed in plain Node: the answers svcBridgeStub gives the sandbox's svc. */
export const svcStub = {
  tokens: {
    create: async (t: { id?: string; type: string }) => ({ id: t.id ?? 'tok_stub', type: t.type }),
    retrieve: async (id: string) => ({ id, data: '555-44-5555' }),
  },
};

/** The same answers on the sandbox's side, through its real svc client (svc.tokens.* become these requests). */
export const svcBridgeStub: SvcBridge = {
  request: async (req) => {
    const token = /^\/tokens\/([^/]+)$/.exec(req.path);
    if (req.method === 'POST' && req.path === '/tokens') {
      const body = req.body as { id?: string; type: string };
      return { status: 201, body: await svcStub.tokens.create(body) };
    }
    if (req.method === 'GET' && token) return { status: 200, body: await svcStub.tokens.retrieve(decodeURIComponent(token[1]!)) };
    return { status: 404, body: { title: 'Not Found', status: 404 } };
  },
};
