import { performance } from 'node:perf_hooks';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { endServerSpan, startServerSpan, withContext } from '@gatehouse/runtime/tracing';

/**
 * What the handlers learn about a request that its access-log line reports. Only identifiers, statuses and
 * timings: never a key, a body, a header value or a proxy's configuration.
 */
export interface AccessRecord {
  /** The route template (`/applications/:id`, `/proxy/*`), never the raw URL: a query may carry a proxy key. */
  route?: string;
  tenantId?: string;
  applicationId?: string;
  /** True for a transform's `svc` call through the internal listener. */
  svc?: boolean;
  proxyId?: string;
  destinationStatus?: number;
  /** From sending the request to the destination to its response headers (or the failure), in milliseconds. */
  destinationMs?: number;
  /** Time spent in the request and response transforms, in milliseconds. */
  transformMs?: number;
  /** Outbound requests the transforms made (fetch, http.request), and their durations added up, in milliseconds. */
  outboundRequests?: number;
  outboundMs?: number;
  /** Why a request was refused or failed: a domain error code (`unauthenticated`, `forbidden`...) or a short name. */
  error?: string;
}

const RECORD = Symbol('gatehouse.access');

type Carrier = IncomingMessage & { [RECORD]?: AccessRecord };

/** The access record of a request, created on first use; handlers fill it in as they learn things. */
export function accessRecord(req: IncomingMessage): AccessRecord {
  const carrier = req as Carrier;
  return (carrier[RECORD] ??= {});
}

/** What one finished request reports to whoever listens (the access log, the metrics). */
export interface FinishedRequest {
  method: string;
  route: string;
  status: number;
  durationMs: number;
  /** The client went away before the response was complete. */
  aborted: boolean;
  record: AccessRecord;
  req: Request;
}

/**
 * Calls `onFinished` once per request when its response is complete or its connection closed, and with tracing on
 * runs the request inside its server span. Mounted first, so requests refused by any later middleware (body
 * parser, guard, filter) are reported too.
 */
export function requestObserver(onFinished: Array<(finished: FinishedRequest) => void>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    const traced = startServerSpan(req.method, req.headers);
    res.once('close', () => {
      const record = accessRecord(req);
      const finished: FinishedRequest = {
        method: req.method,
        route: record.route ?? routeTemplate(req) ?? 'unmatched',
        status: res.statusCode,
        durationMs: performance.now() - started,
        aborted: !res.writableFinished,
        record,
        req,
      };
      for (const listener of onFinished) listener(finished);
      if (traced) endServerSpan(traced.span, finished.method, finished.route, finished.status, (req as Request & { id?: string }).id);
    });
    withContext(traced?.context, next);
  };
}

/** The matched express route (Nest registers its routes on express), with the router's mount path. */
function routeTemplate(req: Request): string | undefined {
  const path = (req as Request & { route?: { path?: unknown } }).route?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : undefined;
}

/** One JSON line per request, at `info`, with `"msg":"request"`. */
export function accessLogWriter(logger: Logger): (finished: FinishedRequest) => void {
  return ({ method, route, status, durationMs, aborted, record, req }) => {
    // Below `info` (LOG_LEVEL=warn...) the line is not written: nor is it built.
    if (!logger.isLevelEnabled('info')) return;
    logger.info(
      {
        kind: 'access',
        request_id: (req as Request & { id?: string }).id,
        method,
        route,
        status,
        duration_ms: round(durationMs),
        ...(aborted ? { aborted: true } : {}),
        ...(record.error ? { error: record.error } : {}),
        ...(record.tenantId ? { tenant_id: record.tenantId } : {}),
        ...(record.applicationId ? { application_id: record.applicationId } : {}),
        ...(record.svc ? { svc: true } : {}),
        ...(record.proxyId ? { proxy_id: record.proxyId } : {}),
        ...(record.destinationStatus !== undefined ? { destination_status: record.destinationStatus } : {}),
        ...(record.transformMs !== undefined ? { transform_ms: round(record.transformMs) } : {}),
        ...(record.outboundRequests !== undefined ? { outbound_requests: record.outboundRequests, outbound_ms: round(record.outboundMs ?? 0) } : {}),
        // The client's address: the peer's, or behind TRUSTED_PROXIES the nearest untrusted X-Forwarded-For hop.
        client_address: req.ip ?? req.socket?.remoteAddress,
      },
      'request',
    );
  };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** Notes why a request failed, for its access-log line: the domain error code when there is one. */
export function noteFailure(req: IncomingMessage | undefined, error: unknown): void {
  if (!req) return;
  const code = (error as { code?: unknown })?.code;
  const record = accessRecord(req);
  if (typeof code === 'string' && /^[a-z_]{1,40}$/.test(code)) record.error = code;
  else if (error instanceof Error) record.error = error.constructor.name.slice(0, 60);
}
