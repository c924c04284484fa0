import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import { problem, sendProblem } from './problem-details';

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
      if (!error) return next();
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') return sendProblem(res, problem(413, `The request body exceeds ${limitBytes} bytes`));
      return sendProblem(res, problem(400, 'The request body is not valid JSON'));
    });
  };
}

function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}
