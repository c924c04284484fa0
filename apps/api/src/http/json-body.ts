import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import { problem, ProblemDetails, sendProblem } from './problem-details';

/**
 * JSON bodies for the management API: `application/json` for POST and PUT, `application/merge-patch+json`
 * for PATCH (RFC 7396); anything else carrying a body is a 415. The proxy route streams its own bodies.
 */
export function jsonBody(limitBytes: number, skipPrefix: string): RequestHandler {
  const parse = express.json({
    limit: limitBytes,
    strict: false,
    type: ['application/json', 'application/merge-patch+json'],
  });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.path === skipPrefix || req.path.startsWith(`${skipPrefix}/`)) return next();
    if (!hasBody(req)) return next();
    const expected = req.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (mediaType !== expected) {
      return sendProblem(res, problem(415, `The request body must be ${expected}`));
    }
    parse(req, res, (error?: unknown) => {
      if (!error) {
        const refusal = unsafeStructure(req.body);
        return refusal ? sendProblem(res, refusal) : next();
      }
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') return sendProblem(res, problem(413, `The request body exceeds ${limitBytes} bytes`));
      return sendProblem(res, problem(400, 'The request body is not valid JSON'));
    });
  };
}

// Far deeper than any body of this API; the validators recurse, so unbounded nesting would overflow their stack.
export const MAX_JSON_DEPTH = 32;
// class-transformer silently drops these keys (and assigning them could reach a prototype): refused, never ignored.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

/** A 400 for a body nested deeper than MAX_JSON_DEPTH or holding a prototype key; walked without recursion. */
export function unsafeStructure(body: unknown): ProblemDetails | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return problem(400, `The request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    for (const key of Object.keys(value)) {
      const at = path ? `${path}.${key}` : key;
      if (FORBIDDEN_KEYS.has(key)) return problem(400, undefined, { [at]: ['is not allowed'] });
      stack.push({ value: (value as Record<string, unknown>)[key], path: at, depth: depth + 1 });
    }
  }
  return undefined;
}

/** Whether a request carries a body (a declared non-zero length or a transfer coding). */
export function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}
