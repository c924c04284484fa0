import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import { FieldErrors, isStorableText } from '@gatehouse/domain';
import { problem, ProblemDetails, sendProblem } from './problem-details';

/**
 * JSON bodies for the management API: `application/json` for POST and PUT, `application/merge-patch+json`
 * for PATCH (RFC 7396); GET, HEAD and DELETE take none (a non-empty body is a 400); anything else carrying a body is
 * a 415, and so is a `charset` other than UTF-8. The body
 * must be strict UTF-8 and a JSON object whose every string is well-formed Unicode: what is accepted is exactly what
 * was sent, never a decoder's U+FFFD. The proxy route streams its own bodies.
 */
export function jsonBody(limitBytes: number, skipPrefix: string): RequestHandler {
  // Raw bytes (inflated when the request names a content coding): the decoding below is ours, not iconv-lite's,
  // which would replace what it cannot decode and accept any `utf-*` charset.
  const readRaw = express.raw({ limit: limitBytes, type: () => true, inflate: true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.path === skipPrefix || req.path.startsWith(`${skipPrefix}/`)) return next();
    if (BODILESS_METHODS.has(req.method)) {
      if (!hasBody(req)) return next();
      const refusal = problem(400, `A ${req.method} request takes no body`);
      if (req.headers['content-length'] !== undefined) return sendProblem(res, refusal);
      // Chunked: read (bounded) to tell an empty body, which is no body, from one; the same 400 beyond the limit.
      return readRaw(req, res, (error?: unknown) => {
        if (error) return sendProblem(res, (error as { type?: string }).type === 'entity.too.large' ? refusal : readFailure(error, limitBytes));
        if ((req.body as Buffer).length > 0) return sendProblem(res, refusal);
        req.body = undefined;
        next();
      });
    }
    if (!hasBody(req)) {
      // A merge patch is a document: a PATCH without one names nothing to change and is refused like `null`.
      return req.method === 'PATCH' ? sendProblem(res, problem(400, NOT_AN_OBJECT)) : next();
    }
    const expected = req.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    const contentType = parseContentType(req.headers['content-type']);
    if (contentType?.mediaType !== expected) {
      return sendProblem(res, problem(415, `The request body must be ${expected}`));
    }
    if (contentType.charset !== undefined && contentType.charset !== 'utf-8') {
      return sendProblem(res, problem(415, 'The request body must be encoded as UTF-8 (charset=utf-8 or no charset)'));
    }
    readRaw(req, res, (error?: unknown) => {
      if (error) return sendProblem(res, readFailure(error, limitBytes));
      const parsed = parseJsonObject(req.body as Buffer, ARRAY_BODY_PATHS.has(req.path));
      if ('problem' in parsed) return sendProblem(res, parsed.problem);
      req.body = parsed.value;
      next();
    });
  };
}

/**
 * Methods whose requests this API gives no meaning to a body (RFC 9110 9.3.1, 9.3.2, 9.3.5): one sent anyway is
 * refused with a 400 rather than ignored, since its sender expects it to count (a filter, a confirmation).
 */
const BODILESS_METHODS = new Set(['GET', 'HEAD', 'DELETE']);

const NOT_AN_OBJECT = 'The request body must be a JSON object';
const NOT_AN_OBJECT_OR_ARRAY = 'The request body must be a JSON object or array';
// Bodies that may be a JSON array at the top (the platform's tokenize takes an array of token requests).
const ARRAY_BODY_PATHS = new Set(['/tokenize', '/detokenize']);
// fatal: an overlong form, a CESU-8 surrogate, a truncated sequence or a stray byte is an error, not U+FFFD.
// A leading byte order mark is dropped (RFC 8259 lets a parser ignore one).
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The decoded, checked body, or the 400 that refuses it. */
export function parseJsonObject(bytes: Buffer, allowArray = false): { value: Record<string, unknown> } | { problem: ProblemDetails } {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { problem: problem(400, 'The request body is not valid UTF-8') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: problem(400, 'The request body is not valid JSON') };
  }
  if (value === null || typeof value !== 'object' || (Array.isArray(value) && !allowArray))
    return { problem: problem(400, allowArray ? NOT_AN_OBJECT_OR_ARRAY : NOT_AN_OBJECT) };
  const duplicate = duplicateMember(text);
  if (duplicate !== undefined)
    return { problem: problem(400, undefined, { __proto__: null, [duplicate]: ['appears more than once in its object'] } as FieldErrors) };
  const refusal = unsafeStructure(value);
  return refusal ? { problem: refusal } : { value: value as Record<string, unknown> };
}

/**
 * The first member name that appears twice in one object of `text` (valid JSON), with its path, or undefined.
 * JSON.parse keeps the last of duplicates silently; another reader of the same bytes (a gateway, a WAF, a log
 * pipeline) may keep the first, so a body with duplicates means two things and is refused.
 */
export function duplicateMember(text: string): string | undefined {
  const stack: ({ names: Set<string>; path: string; index: number } | { names: null; path: string; index: number })[] = [];
  let pendingKey: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') {
      const parent = stack[stack.length - 1];
      const path = parent === undefined ? '' : parent.names ? join(parent.path, pendingKey!) : `${parent.path}[${parent.index}]`;
      stack.push(c === '{' ? { names: new Set(), path, index: 0 } : { names: null, path, index: 0 });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top && !top.names) top.index++;
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      let next = end + 1;
      while (next < text.length && ' \t\r\n'.includes(text[next]!)) next++;
      if (top?.names && text[next] === ':') {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.names.has(name)) return join(top.path, name);
        top.names.add(name);
        pendingKey = name;
      }
      i = end;
    }
  }
  return undefined;
}

function join(path: string, name: string): string {
  return path ? `${path}.${fieldName(name)}` : fieldName(name);
}

function readFailure(error: unknown, limitBytes: number): ProblemDetails {
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large') return problem(413, `The request body exceeds ${limitBytes} bytes`);
  if (type === 'encoding.unsupported') return problem(415, 'The request body has an unsupported Content-Encoding');
  return problem(400, 'The request body could not be read');
}

/** `type/subtype` lower-cased and the `charset` parameter (lower-cased, unquoted) if any; undefined when absent. */
export function parseContentType(header: string | undefined): { mediaType: string; charset?: string } | undefined {
  if (!header) return undefined;
  const [mediaType, ...parameters] = header.split(';');
  let charset: string | undefined;
  for (const parameter of parameters) {
    const at = parameter.indexOf('=');
    if (at < 0) continue;
    if (parameter.slice(0, at).trim().toLowerCase() !== 'charset') continue;
    charset = parameter
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return { mediaType: mediaType!.trim().toLowerCase(), charset };
}

// Far deeper than any body of this API; the validators recurse, so unbounded nesting would overflow their stack.
export const MAX_JSON_DEPTH = 32;
// Nest's ValidationPipe and class-transformer silently drop these keys (and assigning them could reach a prototype):
// refused, never ignored. That is every name of Object.prototype, not only `__proto__` and `constructor`:
// class-transformer skips a member whose name is a function on the new DTO instance (`toString`, `valueOf`,
// `hasOwnProperty`...), so the whitelist never saw it and `{"name":"x","toString":"y"}` was acknowledged as if the
// member had not been sent (found by the fuzz tier, fuzz-operations.test.ts).
const FORBIDDEN_KEYS = new Set(['prototype', ...Object.getOwnPropertyNames(Object.prototype)]);
// Top-level members whose keys are the caller's data (a proxy's `configuration`): any key is allowed there, as data.
export const FREE_FORM_MAPS = new Set(['configuration']);
// PostgreSQL cannot hold NUL, and an unpaired surrogate has no UTF-8 form: either would be stored changed.
const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

/**
 * A 400 for a body nested deeper than MAX_JSON_DEPTH, holding a prototype key outside a free-form map, or holding a
 * string (value or key) that cannot be stored as sent; walked without recursion, naming the field.
 */
export function unsafeStructure(body: unknown): ProblemDetails | undefined {
  // Null-prototype: a member named `__proto__` is a field name like any other.
  const errors: FieldErrors = Object.create(null);
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (!isStorableText(value)) (errors[path || 'body'] ??= []).push(UNSTORABLE);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return problem(400, `The request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    const freeForm = depth === 1 && FREE_FORM_MAPS.has(path);
    for (const key of Object.keys(value)) {
      if (!isStorableText(key)) {
        (errors[path || 'body'] ??= []).push(`must not have member names with NUL characters or unpaired surrogates`);
        continue;
      }
      const at = path ? `${path}.${fieldName(key)}` : fieldName(key);
      if (!freeForm && FORBIDDEN_KEYS.has(key)) {
        (errors[at] ??= []).push('is not allowed');
        continue;
      }
      stack.push({ value: (value as Record<string, unknown>)[key], path: at, depth: depth + 1 });
    }
  }
  return Object.keys(errors).length > 0 ? problem(400, undefined, errors) : undefined;
}

// A field path names a member without echoing a huge one back.
function fieldName(key: string): string {
  return key.length > 100 ? `${key.slice(0, 100)}...` : key;
}

/** Whether a request carries a body (a declared non-zero length or a transfer coding). */
export function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}
