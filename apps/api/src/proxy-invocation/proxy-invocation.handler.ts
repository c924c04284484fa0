import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Dispatcher } from 'undici';
import { Proxy, RateLimiter, requireContainedPath, ResolveProxyForInvocation } from '@gatehouse/domain';
import { Reactor, TransformInput, TransformResult } from '@gatehouse/reactor';
import { inSpan, tracingEnabled } from '@gatehouse/runtime/tracing';
import { AccessRecord, accessRecord } from '../http/access-log';
import { clientAddressOf } from '../http/client-address';
import { hasBody } from '../http/json-body';
import { problem, sendProblem } from '../http/problem-details';
import { enforceRateLimits } from '../rate-limits/rate-limit-headers';
import { arrivedBody, limitedStream, readBounded } from './body-streams';
import { DestinationHead, readWhole, streamToClient } from './destination-call';
import { callerCasedHeaders, DESTINATION_STATUS_HEADER, forwardableHeaders, HeaderMap, outgoingHeaders } from './forwarded-headers';
import { PayloadTooLargeError, ProxyFailures, ResponseTooLargeError } from './proxy-failures';
import { sendPayload, sendTransformError, setHeaders } from './proxy-responses';
import { destinationOf, MOUNT, parseTarget, PROXY_KEY_PARAMETER, queryObject } from './proxy-target';
import { ProxyDetokenization } from './proxy-detokenization';
import { SvcBridgeListener } from './svc-bridge';
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

/**
 * The data plane: `/proxy` and `/proxy/<more path>` (CONTRACT.md section 7), mounted as a raw express
 * handler ahead of Nest's router, so no framework work sits between a request and its destination. Without
 * transforms both bodies stream through untouched; with one, that direction is buffered (BODY_LIMIT_BYTES)
 * and handed to the reactor.
 */
@Injectable()
export class ProxyInvocation implements OnApplicationShutdown {
  private readonly failures: ProxyFailures;
  private readonly console: TransformConsole;

  constructor(
    private readonly resolveProxy: ResolveProxyForInvocation,
    private readonly reactor: Reactor,
    private readonly svc: SvcBridgeListener,
    private readonly rateLimiter: RateLimiter,
    private readonly detokenization: ProxyDetokenization,
    @Inject(DESTINATION_DISPATCHER) private readonly dispatcher: Dispatcher,
    @Inject(PROXY_INVOCATION_SETTINGS) private readonly settings: ProxyInvocationSettings,
  ) {
    this.console = new TransformConsole(settings.transformConsoleLog, new Logger('TransformConsole'));
    this.failures = new ProxyFailures(new Logger('ProxyInvocation'), settings);
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
    this.invoke(req, res).catch((error: unknown) => this.failures.send(req, res, error));
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
    if (limits.length > 0) await enforceRateLimits(this.rateLimiter, res, limits);
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
          headers: callerCasedHeaders(detokenized?.headers ?? forwardableHeaders(req.headers), req.rawHeaders),
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
      const headers = outgoingHeaders(result.headers);
      request.body = resultPayloadOf(result, headers);
      request.headers = headers;
    } else {
      request.headers = detokenized?.headers ?? forwardableHeaders(req.headers);
      request.body =
        detokenized?.body ??
        (hasBody(req) ? (arrivedBody(req) ?? limitedStream(req, this.settings.bodyLimitBytes, () => new PayloadTooLargeError())) : undefined);
    }

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
    const headIn = (head: DestinationHead) => {
      record.destinationMs = performance.now() - sent;
      record.destinationStatus = head.statusCode;
    };

    if (!proxy.responseTransform) {
      // Streamed: the head's status and headers are set as it arrives, the body written as it comes.
      return this.exchange(req, proxy, destination.origin, outgoing, sent, () =>
        streamToClient(this.dispatcher, request, res, (head) => {
          headIn(head);
          res.statusCode = head.statusCode;
          setHeaders(res, forwardableHeaders(head.headers as HeaderMap));
          res.setHeader(DESTINATION_STATUS_HEADER, String(head.statusCode));
        }),
      );
    }

    const upstream = await this.exchange(req, proxy, destination.origin, outgoing, sent, () =>
      readWhole(this.dispatcher, request, this.settings.bodyLimitBytes, () => new ResponseTooLargeError(), headIn),
    );
    const result = await this.transform(record, proxy, 'response', {
      tenantId: proxy.tenantId,
      code: proxy.responseTransform.code,
      args: {
        body: null,
        headers: forwardableHeaders(upstream.headers as HeaderMap),
        status: upstream.statusCode,
      },
      rawBody: rawBodyOf(upstream.body, upstream.headers['content-type']),
      payloadResult: true,
      configuration: proxy.configuration ?? {},
      svc: this.svc.bridgeFor(proxy),
    });
    res.setHeader(DESTINATION_STATUS_HEADER, String(upstream.statusCode));
    if (!result.ok) return sendTransformError(res, result);
    const headers = outgoingHeaders(result.headers);
    sendPayload(res, result.status ?? upstream.statusCode, headers, resultPayloadOf(result, headers));
  }

  /** The request body, whole, for a transform; 413 beyond the limit. */
  private async readBody(req: Request): Promise<Buffer> {
    if (!hasBody(req)) return Buffer.alloc(0);
    return arrivedBody(req) ?? readBounded(req, this.settings.bodyLimitBytes, () => new PayloadTooLargeError());
  }

  /**
   * The exchange with the destination (`call`), in its span when tracing is on. A failure is the destination's
   * (DestinationError: 502 or 504) or the response's size (ResponseTooLargeError); its time is recorded as well.
   */
  private async exchange<T>(req: Request, proxy: Proxy, origin: string, outgoing: HeaderMap, sent: number, call: () => Promise<T>): Promise<T> {
    try {
      if (!tracingEnabled()) return await call();
      return await inSpan(
        'proxy destination',
        'client',
        { 'gatehouse.proxy_id': proxy.id, 'server.address': origin, 'http.request.method': req.method },
        (trace) => {
          if (trace) Object.assign(outgoing, trace);
          return call();
        },
      );
    } catch (error) {
      accessRecord(req).destinationMs ??= performance.now() - sent;
      throw error;
    }
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
}
