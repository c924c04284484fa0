/**
 * The transform contract, decided once (CONTRACT.md sections 7 and 12): what a transform's result may hold and what the
 * caller then sends. The sandbox runtime passes the transform's values on as they are (JSON), and the error classes
 * give a plain description; the reactor holds every result to these rules (Reactor.toResult) and the proxy sends what
 * comes out without checking it again.
 *
 * - Status: an integer from 200 to 599, else the result is a ReactorRuntimeError.
 * - Headers: an object (or nothing, else a ReactorRuntimeError); string values as they are, numbers and booleans as
 *   their text; anything else is left out: null, undefined, objects and arrays, a name that is not an HTTP token, a
 *   value that is not a field value (CR, LF, NUL and other control characters, characters beyond U+00FF).
 * - Errors: `{"proxy_error": {"title", "status", "detail", "errors"}}` with `errors` a map of messages (the platform's
 *   documented body), built only here (proxyErrorBody).
 * - Bodies given to a transform: the parsed JSON for a JSON media type when it parses, else the text; null when empty
 *   (bodyKindOf decides the kind; the runtime parses a body it is passed as it arrived, with this same rule).
 */

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

/** The detail each error class's instances carry (the platform's reactor errors package): the sandbox builds them from this. */
export const PROXY_ERROR_MESSAGES: Readonly<Record<ProxyErrorName, string>> = {
  AuthenticationError: 'Authentication Failed',
  AuthorizationError: 'Forbidden',
  BadRequestError: 'Bad Request',
  InvalidPaymentMethodError: 'Invalid Payment Method',
  InvalidReactorConfigurationError: 'Invalid Reactor Configuration',
  RateLimitError: 'Rate Limit Exceeded',
  ReactorRuntimeError: 'Reactor Runtime Error',
  ServiceUnavailableError: 'Service Unavailable',
  UnprocessableEntityError: 'Unprocessable Entity',
};

/** What an error class (or the host) says about a failure; proxyErrorBody renders it. */
export interface ProxyErrorDescription {
  title: string;
  status: number;
  detail: string;
  errors: Record<string, string[]>;
}

export interface ProxyErrorBody {
  proxy_error: ProxyErrorDescription;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const MAX_ERROR_ENTRIES = 100;
const MAX_MESSAGE_LENGTH = 2000;

export function isTransformStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 200 && value <= 599;
}

/** A transform's headers as the wire takes them (what cannot be sent is left out), or why there are none. */
export function transformHeaders(raw: unknown): { headers: Record<string, string> } | { problem: string } {
  const headers: Record<string, string> = {};
  if (raw === undefined || raw === null) return { headers };
  if (typeof raw !== 'object' || Array.isArray(raw)) return { problem: 'The transform returned headers that are not an object' };
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const text = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;
    if (text === null || name === '__proto__' || !HEADER_NAME.test(name) || !FIELD_VALUE.test(text)) continue;
    headers[name] = text;
  }
  return { headers };
}

/** The `proxy_error` body of a description, its `errors` reduced to a map of messages whatever it held. */
export function proxyErrorBody(description: { title?: unknown; status: number; detail?: unknown; errors?: unknown }): ProxyErrorBody {
  return {
    proxy_error: {
      title: typeof description.title === 'string' ? description.title.slice(0, MAX_MESSAGE_LENGTH) : 'ReactorRuntimeError',
      status: description.status,
      detail: typeof description.detail === 'string' ? description.detail.slice(0, MAX_MESSAGE_LENGTH * 5) : '',
      errors: errorMessages(description.errors),
    },
  };
}

function errorMessages(raw: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [key, value] of Object.entries(raw as Record<string, unknown>).slice(0, MAX_ERROR_ENTRIES)) {
    if (key === '__proto__') continue;
    const list = Array.isArray(value) ? value : [value];
    out[key] = list
      .slice(0, MAX_ERROR_ENTRIES)
      .map((message) => (typeof message === 'string' ? message : (JSON.stringify(message) ?? String(message))).slice(0, MAX_MESSAGE_LENGTH));
  }
  return out;
}

/** Whether a body of this content type reaches a transform parsed (when it parses). */
export function isJsonMediaType(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  if (!value) return false;
  const media = value.split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

/** What a transform sees of a body (`args.body`, an svc answer): parsed JSON for a JSON media type, else the text; null when empty. */
export function transformBodyOf(text: string, json: boolean): unknown {
  if (text === '') return null;
  if (!json) return text;
  try {
    return JSON.parse(text);
  } catch {
    // Declared JSON that is not: the transform gets the text and decides.
    return text;
  }
}
