import { performance } from 'node:perf_hooks';
import { Readable, Transform, TransformCallback } from 'node:stream';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Dispatcher } from 'undici';
import { Proxy, RateLimiter, requireContainedPath, ResolveProxyForInvocation } from '@gatehouse/domain';
import { Reactor, TransformInput, TransformResult } from '@gatehouse/reactor';
import { inSpan } from '@gatehouse/runtime/tracing';
import { AccessRecord, accessRecord, noteFailure } from '../http/access-log';
import { clientAddressOf } from '../http/client-address';
import { hasBody } from '../http/json-body';
import { enforceRateLimits, RATE_LIMIT_FIELDS } from '../rate-limits/rate-limit-headers';
import { problem, ProblemDetailsFilter, sendProblem } from '../http/problem-details';
import { DestinationRefusedError } from './destination-agent';
import { DESTINATION_STATUS_HEADER, forwardableHeaders, HeaderMap, InvalidTransformResultError, transformHeaders } from './forwarded-headers';
import { ProxyDetokenization } from './proxy-detokenization';
import { SvcLoopback } from './svc-bridge';
import { TransformConsole } from './transform-console';
import { rawBodyOf, resultPayloadOf } from './transform-payloads';

export interface ProxyInvocationSettings {
  bodyLimitBytes: number;
  destinationTimeoutMs: number;
  /** TRANSFORM_CONSOLE_LOG: transforms' console output goes to the service log (bounded). Off by default. */
  transformConsoleLog: boolean;
}

export const PROXY_INVOCATION_SETTINGS = Symbol('PROXY_INVOCATION_SETTINGS');
/** The pooled, SSRF-checking undici dispatcher all destinations are reached through. */
export const DESTINATION_DISPATCHER = Symbol('DESTINATION_DISPATCHER');

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
/** W3C trace context, passed on to destinations. */
const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;
const PROXY_KEY_PARAMETER = 'svc-proxy-key';
const MOUNT = '/proxy';

class PayloadTooLargeError extends Error {}

/** A failure to exchange with the destination (as opposed to a fault of this service). */
class DestinationError extends Error {
  constructor(cause: unknown) {
    super('destination exchange failed', { cause });
  }
}

interface Target {
  /** `<more path>` after /proxy, '' or starting with '/'. */
  path: string;
  /** The raw query string without svc-proxy-key, '' when none. */
  query: string;
  params: URLSearchParams;
}

/**
 * The data plane: `/proxy` and `/proxy/<more path>` (CONTRACT.md section 7), mounted as a raw express
 * handler ahead of Nest's router, so no framework work sits between a request and its destination. Without
 * transforms both bodies stream through untouched; with one, that direction is buffered (BODY_LIMIT_BYTES)
 * and handed to the reactor.
 */
@Injectable()
export class ProxyInvocation implements OnApplicationShutdown {
  private readonly logger = new Logger('ProxyInvocation');
  private readonly problems = new ProblemDetailsFilter();
  private readonly console: TransformConsole;

  constructor(
    private readonly resolveProxy: ResolveProxyForInvocation,
    private readonly reactor: Reactor,
    private readonly svc: SvcLoopback,
    private readonly rateLimiter: RateLimiter,
    private readonly detokenization: ProxyDetokenization,
    @Inject(DESTINATION_DISPATCHER) private readonly dispatcher: Dispatcher,
    @Inject(PROXY_INVOCATION_SETTINGS) private readonly settings: ProxyInvocationSettings,
  ) {
    this.console = new TransformConsole(settings.transformConsoleLog, new Logger('TransformConsole'));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher.close();
  }

  /** The express handler: mount it at `/proxy`. */
  readonly handle = (req: Request, res: Response, next: NextFunction): void => {
    // Express matches mount paths case-insensitively, the JSON body parser's skip does not: /PROXY is no proxy.
    if (!req.originalUrl.startsWith(MOUNT)) return next();
    const rest = req.originalUrl.charAt(MOUNT.length);
    accessRecord(req).route = rest === '' || rest === '?' ? MOUNT : `${MOUNT}/*`;
    this.invoke(req, res).catch((error: unknown) => this.fail(req, res, error));
  };

  private async invoke(req: Request, res: Response): Promise<void> {
    if (!METHODS.has(req.method)) {
      return sendProblem(res, problem(405, `Proxies accept ${[...METHODS].join(', ')}`), { allow: [...METHODS].join(', ') });
    }
    const declaredLength = Number(req.headers['content-length'] ?? 0);
    if (declaredLength > this.settings.bodyLimitBytes) throw new PayloadTooLargeError();
    const target = parseTarget(req.originalUrl);
    // Before anything is looked up: a path that could leave the destination's path is refused whatever the proxy.
    requireContainedPath(target.path);
    const headerKey = req.headers[PROXY_KEY_PARAMETER];
    const proxyKey = typeof headerKey === 'string' ? headerKey : (target.params.get(PROXY_KEY_PARAMETER) ?? undefined);
    const apiKey = req.headers['svc-api-key'];
    const { proxy, limits, caller } = await this.resolveProxy.execute(proxyKey, typeof apiKey === 'string' ? apiKey : undefined, () => clientAddressOf(req));
    const record = accessRecord(req);
    record.proxyId = proxy.id;
    record.tenantId = proxy.tenantId;
    if (proxy.applicationId) record.applicationId = proxy.applicationId;
    await enforceRateLimits(this.rateLimiter, res, limits);
    // A proxy with require_auth (a caller's key): its {{ <token id> }} expressions, with that key, before anything else.
    const detokenized = caller ? await this.detokenization.apply(req, caller, () => this.readBody(req)) : undefined;

    const destination = destinationOf(proxy);
    const path = `${destination.basePath}${target.path}`;
    const request: Dispatcher.RequestOptions = {
      origin: destination.origin,
      path: `${path.startsWith('/') ? path : `/${path}`}${target.query ? `?${target.query}` : ''}`,
      method: req.method as Dispatcher.HttpMethod,
      headersTimeout: this.settings.destinationTimeoutMs,
      bodyTimeout: this.settings.destinationTimeoutMs,
    };

    if (proxy.requestTransform) {
      const raw = detokenized?.body ?? (await this.readBody(req));
      const result = await this.transform(record, proxy, 'request', {
        tenantId: proxy.tenantId,
        code: proxy.requestTransform.code,
        // `body` is set in the sandbox from rawBody (null here keeps its place first among the args).
        args: {
          body: null,
          headers: detokenized?.headers ?? forwardableHeaders(req.headers),
          method: req.method,
          path: target.path,
          query: queryObject(target.params),
        },
        rawBody: rawBodyOf(raw, req.headers['content-type']),
        payloadResult: true,
        configuration: proxy.configuration ?? {},
        svc: this.svc.bridgeFor(proxy),
      });
      if (!result.ok) return sendTransformError(res, result);
      const headers = transformHeaders(result.headers, 'request');
      request.body = resultPayloadOf(result, headers);
      request.headers = headers;
    } else {
      request.headers = detokenized?.headers ?? forwardableHeaders(req.headers);
      request.body = detokenized?.body ?? (hasBody(req) ? (arrivedBody(req) ?? this.limitedStream(req)) : undefined);
    }

    let upstream: Dispatcher.ResponseData;
    const outgoing = request.headers as HeaderMap;
    // The service's own correlation, whatever a transform did with the headers: the request id, and the caller's
    // trace (as it came, or through this service's destination span when tracing is on).
    const requestId = (req as Request & { id?: string }).id;
    if (requestId) outgoing['x-request-id'] = requestId;
    for (const name of TRACE_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') outgoing[name] = value;
    }
    const sent = performance.now();
    try {
      upstream = await inSpan('proxy destination', 'client', { 'gatehouse.proxy_id': proxy.id, 'server.address': destination.origin, 'http.request.method': req.method }, (trace) => {
        if (trace) Object.assign(outgoing, trace);
        return this.dispatcher.request(request);
      });
    } catch (error) {
      throw new DestinationError(error);
    } finally {
      record.destinationMs = performance.now() - sent;
    }
    record.destinationStatus = upstream.statusCode;

    if (!proxy.responseTransform) {
      res.statusCode = upstream.statusCode;
      setHeaders(res, forwardableHeaders(upstream.headers as HeaderMap));
      res.setHeader(DESTINATION_STATUS_HEADER, String(upstream.statusCode));
      streamResponse(upstream.body, res);
      return;
    }

    const raw = await this.readDestinationBody(upstream);
    const result = await this.transform(record, proxy, 'response', {
      tenantId: proxy.tenantId,
      code: proxy.responseTransform.code,
      args: {
        body: null,
        headers: forwardableHeaders(upstream.headers as HeaderMap),
        status: upstream.statusCode,
      },
      rawBody: rawBodyOf(raw, upstream.headers['content-type']),
      payloadResult: true,
      configuration: proxy.configuration ?? {},
      svc: this.svc.bridgeFor(proxy),
    });
    res.setHeader(DESTINATION_STATUS_HEADER, String(upstream.statusCode));
    if (!result.ok) return sendTransformError(res, result);
    const status = result.status ?? upstream.statusCode;
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new InvalidTransformResultError('The response transform returned a status outside 200-599');
    }
    const headers = transformHeaders(result.headers, 'response');
    sendPayload(res, status, headers, resultPayloadOf(result, headers));
  }

  /** The request body, whole, for a transform; 413 beyond the limit. */
  private async readBody(req: Request): Promise<Buffer> {
    if (!hasBody(req)) return Buffer.alloc(0);
    return arrivedBody(req) ?? readBounded(req, this.settings.bodyLimitBytes, () => new PayloadTooLargeError());
  }

  private async readDestinationBody(upstream: Dispatcher.ResponseData): Promise<Buffer> {
    try {
      return await readBounded(upstream.body, this.settings.bodyLimitBytes, () => new ResponseTooLargeError());
    } catch (error) {
      if (error instanceof ResponseTooLargeError) throw error;
      throw new DestinationError(error);
    }
  }

  /**
   * The request body streamed to the destination. A declared content-length is enforced by Node's parser
   * (and checked against the limit already); a chunked body is counted on the way through.
   */
  private limitedStream(req: Request): Readable {
    if (req.headers['content-length'] !== undefined) return req;
    const limit = this.settings.bodyLimitBytes;
    let seen = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
        seen += chunk.length;
        if (seen > limit) callback(new PayloadTooLargeError());
        else callback(null, chunk);
      },
    });
    req.pipe(counter);
    req.once('error', (error) => counter.destroy(error));
    return counter;
  }

  /** One transform run, timed for the access log; its console output goes nowhere unless TRANSFORM_CONSOLE_LOG. */
  private async transform(record: AccessRecord, proxy: Proxy, direction: 'request' | 'response', input: TransformInput): Promise<TransformResult> {
    const started = performance.now();
    const result = await inSpan(`transform ${direction}`, 'internal', { 'gatehouse.proxy_id': proxy.id }, () => this.reactor.run(input));
    record.transformMs = (record.transformMs ?? 0) + (performance.now() - started);
    if (result.outbound) {
      record.outboundRequests = (record.outboundRequests ?? 0) + result.outbound.requests;
      record.outboundMs = (record.outboundMs ?? 0) + result.outbound.ms;
    }
    if (result.logs.length > 0) this.console.write(proxy, direction, result.logs);
    return result;
  }

  private fail(req: Request, res: Response, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    noteFailure(req, error);
    const record = accessRecord(req);
    const chain = causes(error);
    if (chain.some((e) => e instanceof PayloadTooLargeError)) {
      // The rest of the body is not read: close the connection rather than drain it.
      return sendProblem(res, problem(413, `The request body exceeds ${this.settings.bodyLimitBytes} bytes`), { connection: 'close' });
    }
    if (error instanceof ResponseTooLargeError) {
      return sendProblem(res, problem(502, `The destination's response exceeds ${this.settings.bodyLimitBytes} bytes, too large for the response transform`));
    }
    if (error instanceof InvalidTransformResultError) return sendTransformError(res, runtimeError(error.message));
    if (error instanceof DestinationError) {
      const refused = chain.find((e) => e instanceof DestinationRefusedError);
      if (refused) {
        record.error = 'destination_refused';
        return sendProblem(res, problem(502, (refused as Error).message));
      }
      const code = chain.map((e) => (e as { code?: unknown })?.code).find((c) => typeof c === 'string');
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
        record.error = 'destination_timeout';
        return sendProblem(res, problem(504, `The destination did not answer within ${this.settings.destinationTimeoutMs} ms`));
      }
      if (code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH' || req.destroyed) {
        return sendProblem(res, problem(400, 'The request body ended before its declared length'), { connection: 'close' });
      }
      record.error = 'destination_unreachable';
      this.logger.debug(`destination unreachable: ${code ?? String(chain[chain.length - 1])}`);
      return sendProblem(res, problem(502, 'The destination could not be reached'));
    }
    // Domain errors (404, 401, 403, 429) map as everywhere else; anything unexpected is a logged 500.
    this.problems.send(res, error);
  }
}

class ResponseTooLargeError extends Error {}

/** The error and its causes, outermost first. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && chain.length < 8; current = (current as { cause?: unknown })?.cause) {
    chain.push(current);
    if (!(current instanceof Error)) break;
  }
  return chain;
}

/**
 * A body that has already arrived whole (the usual case for small bodies, which come with their headers) as one
 * buffer, so it leaves in the same write as the request head; undefined while bytes are still on their way.
 */
function arrivedBody(req: Request): Buffer | undefined {
  const declared = req.headers['content-length'];
  if (declared === undefined || req.readableLength === 0 || req.readableLength !== Number(declared)) return undefined;
  const body = req.read() as Buffer | null;
  // Nothing is left to read; let the stream run to its end so the server sees the request consumed.
  req.resume();
  return body ?? undefined;
}

/**
 * Pipes the destination's body to the client. Plain pipe() rather than stream.pipeline, which costs an
 * AbortController per call; failures on either side are wired by hand.
 */
function streamResponse(body: Readable, res: Response): void {
  body.once('error', () => res.destroy());
  res.once('close', () => {
    if (!res.writableFinished) body.destroy();
  });
  body.pipe(res);
}

/**
 * A whole body, refused beyond `limit` bytes. Event-driven rather than `for await`, whose iterator costs
 * several promises per chunk on the data plane's hot path.
 */
function readBounded(stream: Readable, limit: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      stream.off('data', onData);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        fail(tooLarge());
        stream.destroy();
        return;
      }
      chunks.push(chunk);
    };
    stream.on('data', onData);
    stream.once('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    });
    stream.once('error', fail);
    // Closed before its end (the peer went away): the body is incomplete.
    stream.once('close', () => {
      if (!settled) fail(new Error('The body ended before it was complete'));
    });
  });
}

/** `/proxy/<more path>?<query>` split apart, the proxy key taken out of the query. */
export function parseTarget(originalUrl: string): Target {
  const rest = originalUrl.slice(MOUNT.length);
  const q = rest.indexOf('?');
  const path = q === -1 ? rest : rest.slice(0, q);
  const rawQuery = q === -1 ? '' : rest.slice(q + 1);
  if (!rawQuery) return { path, query: '', params: new URLSearchParams() };
  // Filter the raw parts, so every other parameter reaches the destination byte for byte.
  const kept = rawQuery.split('&').filter((part) => {
    const name = part.split('=', 1)[0]!;
    try {
      return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase() !== PROXY_KEY_PARAMETER;
    } catch {
      return true;
    }
  });
  return { path, query: kept.join('&'), params: new URLSearchParams(rawQuery) };
}

function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of params) {
    if (name.toLowerCase() === PROXY_KEY_PARAMETER) continue;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}

/**
 * The destination's origin and base path, parsed once per Proxy object: the proxy cache hands every
 * request the same (frozen) object until the proxy changes.
 */
const destinations = new WeakMap<Proxy, { origin: string; basePath: string }>();
function destinationOf(proxy: Proxy): { origin: string; basePath: string } {
  let destination = destinations.get(proxy);
  if (!destination) {
    const url = new URL(proxy.destinationUrl);
    destination = { origin: url.origin, basePath: url.pathname.replace(/\/$/, '') };
    destinations.set(proxy, destination);
  }
  return destination;
}

/** The destination's (or transform's) headers; RateLimit fields of its own are listed after Gatehouse's policies. */
function setHeaders(res: Response, headers: HeaderMap): void {
  for (const name in headers) {
    const ours = RATE_LIMIT_FIELDS.has(name.toLowerCase()) ? res.getHeader(name) : undefined;
    res.setHeader(name, ours === undefined ? headers[name]! : `${String(ours)}, ${String(headers[name])}`);
  }
}

/** A transform's error result, sent as it is: its status, its headers, its body (JSON unless a string). */
function sendTransformError(res: Response, result: Extract<TransformResult, { ok: false }>): void {
  // The sandbox pool (or this tenant's share of it) is full: the service's own 503, not the transform's.
  if (result.retryAfterSeconds !== undefined) {
    const detail = (result.body as { proxy_error?: { detail?: string } } | null)?.proxy_error?.detail ?? 'No transform sandbox is available';
    return sendProblem(res, problem(503, detail), { 'retry-after': String(result.retryAfterSeconds) });
  }
  let headers: HeaderMap;
  try {
    headers = transformHeaders(result.headers, 'response');
  } catch {
    headers = {};
  }
  const payload = resultPayloadOf(result, headers);
  // A status the wire cannot carry becomes the runtime error it is.
  if (!Number.isInteger(result.status) || result.status < 200 || result.status > 599) {
    return sendTransformError(res, runtimeError(`The transform answered with the invalid status ${String(result.status).slice(0, 20)}`));
  }
  sendPayload(res, result.status, headers, payload);
}

function sendPayload(res: Response, status: number, headers: HeaderMap, payload: Buffer | undefined): void {
  // 204 and 304 carry no body (RFC 9110), whatever a transform returned with them.
  const bodiless = status === 204 || status === 304;
  if (bodiless) delete headers['content-length'];
  res.statusCode = status;
  setHeaders(res, headers);
  res.end(bodiless ? undefined : payload);
}

function runtimeError(detail: string): Extract<TransformResult, { ok: false }> {
  return {
    ok: false,
    status: 500,
    headers: {},
    body: { proxy_error: { title: 'ReactorRuntimeError', status: 500, detail, errors: {} } },
    logs: [],
  };
}
