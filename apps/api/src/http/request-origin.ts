import type { Request } from 'express';
import { MAX_USER_AGENT_LENGTH, RequestOrigin } from '@gatehouse/domain';

/**
 * What the audit logs of a request record about where it came from. `req.ip` is Express's client address:
 * the socket's peer, or, when that peer is one of TRUSTED_PROXIES (`trust proxy`), the right-most
 * X-Forwarded-For entry not itself a trusted proxy; so a client cannot choose its own address.
 */
export function requestOriginOf(req: Request): RequestOrigin {
  const requestId = (req as Request & { id?: string }).id;
  const ip = req.ip?.startsWith('::ffff:') && req.ip.includes('.') ? req.ip.slice('::ffff:'.length) : req.ip;
  const userAgent = req.headers['user-agent'];
  return {
    ...(requestId ? { requestId } : {}),
    ...(ip ? { sourceIp: ip } : {}),
    ...(userAgent ? { userAgent: userAgent.slice(0, MAX_USER_AGENT_LENGTH) } : {}),
  };
}
