import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { inVersionScope } from '@gatehouse/persistence';

interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/**
 * Gives each request an id (a caller's `x-request-id` when sane), echoed back and on every log line; and a cache
 * version scope, so that its cached reads (the key, then e.g. the application it asks for) check the shared version
 * once (inVersionScope).
 */
export function requestContextMiddleware(req: Request, res: Response, next: NextFunction): void {
  const offered = req.headers['x-request-id'];
  const requestId = typeof offered === 'string' && SAFE_REQUEST_ID.test(offered) ? offered : randomUUID();
  res.setHeader('x-request-id', requestId);
  (req as Request & { id?: string }).id = requestId;
  storage.run({ requestId }, () => inVersionScope(next));
}
