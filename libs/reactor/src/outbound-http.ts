import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest, type RequestOptions as HttpsRequestOptions } from 'node:https';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { types } from 'node:util';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { AddressPolicy, DestinationRefusedError, guardedLookup, type LookupFunction } from './address-policy';

/** The outbound-HTTP settings of a sandbox process (part of SandboxProcessSettings). */
export interface OutboundSettings {
  timeoutMs: number;
  /** Requests one invocation may start (redirects followed for `fetch` included). */
  maxOutboundRequests: number;
  /** Requests of one invocation in flight at once, each on its own connection; the rest wait their turn. */
  maxOutboundConnections: number;
  /** Largest response body (after decoding, for `fetch`) and largest request body, in bytes. */
  maxOutboundBodyBytes: number;
  outboundAllowHttp: boolean;
  outboundAllowedCidrs: string[];
  /** Fixed name resolution, tried before DNS: each lookup of a name answers its next address in turn (tests). */
  outboundHosts?: Record<string, string[]>;
}

/** Redirects one chain may take, whoever follows them (`fetch` here, or node-fetch and axios in the sandbox). */
export const MAX_REDIRECTS = 5;
const TLS_OPTIONS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized', 'minVersion', 'maxVersion', 'ciphers'] as const;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** How an outbound request ended, as metrics count it. */
export type OutboundOutcome = 'ok' | 'refused' | 'limit' | 'error' | 'timeout' | 'too_large';

/** Hands a finished request to the sandbox: the JSON head (or `{error, code}`) and the body's bytes. */
export type DeliverResponse = (id: number, head: string, body?: ArrayBuffer) => void;

interface OutboundRequest {
  url: URL;
  method: string;
  /** Flat [name, value, name, value...], as the transform set them. */
  headers: string[];
  tls: Record<string, unknown>;
  /** 'follow' (the host follows up to MAX_REDIRECTS), 'error' or 'manual' (fetch's modes); http.request: 'manual'. */
  redirect: 'follow' | 'error' | 'manual';
  /** Decode content-encoding (fetch does, http.request does not). */
  decode: boolean;
}

class OutboundError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly outcome: OutboundOutcome,
  ) {
    super(message);
  }
}

/**
 * The outbound HTTP of one invocation, in the sandbox process (its cost dies with the process at the deadline and
 * counts against the process's address-space cap; the API process holds nothing for it). Every connection is checked
 * against the destination policy on the address it connects to; at most `maxOutboundRequests` requests, at most
 * `maxOutboundConnections` in flight (one connection each, no keep-alive: nothing stays open between them), bodies
 * bounded both ways, nothing running past the invocation's deadline, and everything destroyed when it ends.
 */
export class OutboundHttp {
  private started = 0;
  private active = 0;
  private limitReported = false;
  private ended = false;
  private readonly waiting: (() => void)[] = [];
  private readonly inFlight = new Map<number, ClientRequest>();
  /** URLs a response redirected to, with the length of the chain that led there. */
  private readonly redirectHops = new Map<string, number>();
  private readonly lookup: ReturnType<typeof guardedLookup>;
  private readonly deadline: number;

  constructor(
    private readonly settings: OutboundSettings,
    private readonly policy: AddressPolicy,
    private readonly deliver: DeliverResponse,
    private readonly report: (ms: number, outcome: OutboundOutcome) => void,
  ) {
    this.deadline = performance.now() + settings.timeoutMs;
    this.lookup = guardedLookup(policy, resolverFor(settings.outboundHosts));
  }

  /** Starts request `id`; a refusal the sandbox throws at once is returned as a message, else null. */
  start(id: unknown, requestJson: unknown, body: unknown): string | null {
    if (this.ended) return 'the invocation has ended';
    if (typeof id !== 'number' || typeof requestJson !== 'string') return 'invalid request';
    if (body !== undefined && body !== null && !(types.isUint8Array(body) && body.byteLength <= this.settings.maxOutboundBodyBytes)) {
      return `a request body may be at most ${this.settings.maxOutboundBodyBytes} bytes`;
    }
    const request = parseRequest(requestJson);
    if (typeof request === 'string') return request;
    if (this.started >= this.settings.maxOutboundRequests) {
      // Reported once: a transform refused in a loop would otherwise flood the API process with reports.
      if (!this.limitReported) this.report(0, 'limit');
      this.limitReported = true;
      return `a transform may make at most ${this.settings.maxOutboundRequests} outbound requests`;
    }
    this.started++;
    const bytes = body === undefined || body === null ? null : (body as Uint8Array);
    this.whenFree(() => {
      const begun = performance.now();
      this.run(id, request, bytes).then(
        ({ head, payload }) => {
          this.report(performance.now() - begun, 'ok');
          if (!this.ended) this.deliver(id, head, payload);
        },
        (error: unknown) => {
          const failure = error instanceof OutboundError ? error : new OutboundError(messageOf(error), codeOf(error), 'error');
          this.report(performance.now() - begun, failure.outcome);
          if (!this.ended) this.deliver(id, JSON.stringify({ error: failure.message, code: failure.code }));
        },
      );
    });
    return null;
  }

  /** The transform aborted request `id` (AbortSignal, `req.destroy()`): its connection is closed. */
  abort(id: unknown): void {
    if (typeof id !== 'number') return;
    this.inFlight.get(id)?.destroy(new OutboundError('The operation was aborted', 'ABORT_ERR', 'error'));
  }

  /** The invocation is over: every connection is closed, nothing waiting starts, nothing more is delivered. */
  end(): void {
    this.ended = true;
    this.waiting.length = 0;
    for (const request of this.inFlight.values()) request.destroy();
    this.inFlight.clear();
  }

  private whenFree(task: () => void): void {
    if (this.active < this.settings.maxOutboundConnections) {
      this.active++;
      task();
      return;
    }
    this.waiting.push(() => {
      this.active++;
      task();
    });
  }

  private finished(): void {
    this.active--;
    if (!this.ended && this.waiting.length > 0) this.waiting.shift()!();
  }

  /** One request, and for `redirect: 'follow'` the redirects after it, each a request of its own (counted, checked). */
  private async run(id: number, first: OutboundRequest, body: Uint8Array | null): Promise<{ head: string; payload: ArrayBuffer }> {
    let request = first;
    let payload = body;
    try {
      for (;;) {
        const { response, bytes } = await this.exchange(id, request, payload);
        const status = response.statusCode ?? 0;
        const location = REDIRECTS.has(status) ? response.headers.location : undefined;
        const next = location === undefined ? null : this.redirectTarget(request.url, location);
        if (next !== null && request.redirect === 'error') throw new OutboundError('redirect mode is set to error', 'ERR_REDIRECT', 'error');
        if (next === null || request.redirect !== 'follow') {
          return { head: headOf(response, request.url, first.url !== request.url), payload: bytes };
        }
        if (this.started >= this.settings.maxOutboundRequests) {
          throw new OutboundError(`a transform may make at most ${this.settings.maxOutboundRequests} outbound requests`, 'ERR_GATEHOUSE_LIMIT', 'limit');
        }
        this.started++;
        // As fetch does: 303 (and 301/302 after a POST) go on as a GET without a body; credentials stay on their origin.
        const asGet = status === 303 ? request.method !== 'HEAD' : (status === 301 || status === 302) && request.method === 'POST';
        const crossOrigin = next.origin !== request.url.origin;
        const headers = filterHeaders(
          request.headers,
          (name) => (asGet && /^content-/i.test(name)) || (crossOrigin && /^(authorization|cookie|proxy-authorization)$/i.test(name)),
        );
        request = { ...request, url: next, method: asGet ? 'GET' : request.method, headers };
        if (asGet) payload = null;
      }
    } finally {
      this.finished();
    }
  }

  /** The URL a redirect leads to, counted on its chain: beyond MAX_REDIRECTS, refused. */
  private redirectTarget(from: URL, location: string): URL | null {
    if (!URL.canParse(location, from.href)) return null;
    const next = new URL(location, from);
    const hops = (this.redirectHops.get(from.href) ?? 0) + 1;
    if (this.redirectHops.size < 1000) this.redirectHops.set(next.href, hops);
    return next;
  }

  private exchange(id: number, request: OutboundRequest, body: Uint8Array | null): Promise<{ response: IncomingMessage; bytes: ArrayBuffer }> {
    const { url } = request;
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      return Promise.reject(new OutboundError(`Protocol "${url.protocol}" not supported`, 'ERR_INVALID_PROTOCOL', 'refused'));
    if (url.protocol === 'http:' && !this.policy.allowHttp) {
      return Promise.reject(new OutboundError('Plain http:// requests are not allowed (PROXY_ALLOW_HTTP)', 'ERR_GATEHOUSE_HTTP_REFUSED', 'refused'));
    }
    if ((this.redirectHops.get(url.href) ?? 0) > MAX_REDIRECTS) {
      return Promise.reject(new OutboundError(`Too many redirects: at most ${MAX_REDIRECTS} are followed`, 'ERR_TOO_MANY_REDIRECTS', 'refused'));
    }
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    // net.connect skips the lookup for a literal address, so literals are judged here.
    if (isIP(hostname) !== 0 && !this.policy.allowsAddress(hostname)) return Promise.reject(refused());
    const left = this.deadline - performance.now();
    if (left <= 0) return Promise.reject(new OutboundError('The transform deadline has passed', 'ETIMEDOUT', 'timeout'));
    const options: RequestOptions & HttpsRequestOptions = {
      protocol: url.protocol,
      hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: headerObject(request.headers),
      agent: false,
      lookup: this.lookup as never,
      ...request.tls,
    };
    if (url.username !== '' || url.password !== '') options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    return new Promise((resolve, reject) => {
      let outgoing: ClientRequest;
      try {
        outgoing = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options);
      } catch (error) {
        reject(new OutboundError(messageOf(error), codeOf(error), 'error'));
        return;
      }
      this.inFlight.set(id, outgoing);
      const timer = setTimeout(
        () => outgoing.destroy(new OutboundError('The request did not finish within the transform deadline', 'ETIMEDOUT', 'timeout')),
        left,
      );
      const settle = () => {
        clearTimeout(timer);
        if (this.inFlight.get(id) === outgoing) this.inFlight.delete(id);
      };
      outgoing.once('error', (error) => {
        settle();
        reject(error instanceof DestinationRefusedError ? refused() : error);
      });
      outgoing.once('response', (response) => {
        this.readBody(response, request).then(
          (bytes) => {
            settle();
            resolve({ response, bytes });
          },
          (error: unknown) => {
            settle();
            outgoing.destroy();
            reject(error);
          },
        );
      });
      outgoing.end(body ?? undefined);
    });
  }

  private readBody(response: IncomingMessage, request: OutboundRequest): Promise<ArrayBuffer> {
    const limit = this.settings.maxOutboundBodyBytes;
    const source = request.decode ? decoded(response) : response;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let total = 0;
      source.on('data', (chunk: Buffer) => {
        total += chunk.length;
        if (total > limit) {
          source.destroy();
          response.destroy();
          reject(new OutboundError(`The response body exceeds ${limit} bytes`, 'ERR_GATEHOUSE_BODY_TOO_LARGE', 'too_large'));
          return;
        }
        chunks.push(chunk);
      });
      source.once('end', () => {
        const out = new ArrayBuffer(total);
        const view = new Uint8Array(out);
        let offset = 0;
        for (const chunk of chunks) {
          view.set(chunk, offset);
          offset += chunk.length;
        }
        resolve(out);
      });
      source.once('error', reject);
      response.once('close', () => {
        if (!response.complete) reject(new OutboundError('The response ended early', 'ECONNRESET', 'error'));
      });
    });
  }
}

function refused(): OutboundError {
  return new OutboundError(new DestinationRefusedError().message, 'GATEHOUSE_DESTINATION_REFUSED', 'refused');
}

/** The body as fetch reads it: content-encoding undone (gzip, deflate, br), bounded after decoding. */
function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : null;
  if (decoder === null) return response;
  response.on('error', (error) => decoder.destroy(error));
  return response.pipe(decoder);
}

function headOf(response: IncomingMessage, url: URL, redirected: boolean): string {
  return JSON.stringify({
    status: response.statusCode,
    statusText: response.statusMessage ?? '',
    httpVersion: response.httpVersion,
    headers: response.headers,
    rawHeaders: response.rawHeaders,
    url: url.href,
    redirected,
  });
}

/** Flat pairs as Node's request options take them (an array would also drop the Host header Node adds). */
function headerObject(flat: string[]): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  const names = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i]!;
    const first = names.get(name.toLowerCase());
    if (first === undefined) {
      names.set(name.toLowerCase(), name);
      out[name] = flat[i + 1]!;
    } else {
      const existing = out[first]!;
      out[first] = Array.isArray(existing) ? [...existing, flat[i + 1]!] : [existing, flat[i + 1]!];
    }
  }
  return out;
}

function filterHeaders(flat: string[], drop: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) if (!drop(flat[i]!)) out.push(flat[i]!, flat[i + 1]!);
  return out;
}

/** What the sandbox asked for, checked again here (nothing a transform says is trusted). */
export function parseRequest(json: string): OutboundRequest | string {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return 'invalid request';
  }
  if (raw === null || typeof raw !== 'object') return 'invalid request';
  if (typeof raw.url !== 'string' || !URL.canParse(raw.url)) return `Invalid URL: ${String(raw.url).slice(0, 200)}`;
  const method = typeof raw.method === 'string' ? raw.method : 'GET';
  if (!TOKEN.test(method) || method.toUpperCase() === 'CONNECT') return `Unsupported method ${method.slice(0, 40)}`;
  const headers: string[] = [];
  if (Array.isArray(raw.headers)) {
    for (const entry of raw.headers) {
      if (typeof entry !== 'string') return 'invalid request headers';
      headers.push(entry);
    }
  }
  if (headers.length % 2 !== 0) return 'invalid request headers';
  const tls: Record<string, unknown> = {};
  const given = raw.tls !== null && typeof raw.tls === 'object' ? (raw.tls as Record<string, unknown>) : {};
  for (const name of TLS_OPTIONS) {
    const value = given[name];
    if (value === undefined || value === null) continue;
    if (name === 'rejectUnauthorized') tls[name] = value !== false;
    else if (typeof value === 'string') tls[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) tls[name] = value;
  }
  const redirect = raw.redirect === 'follow' || raw.redirect === 'error' ? raw.redirect : 'manual';
  return { url: new URL(raw.url), method, headers, tls, redirect, decode: raw.decode === true };
}

/** Lookups of each fixed name so far, in this process. */
const turns = new Map<string, number>();

function resolverFor(hosts: Record<string, string[]> | undefined): LookupFunction {
  return (hostname, options, callback) => {
    const fixed = hosts?.[hostname.toLowerCase()];
    if (!fixed || fixed.length === 0) return dnsLookup(hostname, options, callback);
    const turn = turns.get(hostname) ?? 0;
    turns.set(hostname, turn + 1);
    const address = fixed[turn % fixed.length]!;
    const answer: LookupAddress[] = [{ address, family: isIP(address) === 6 ? 6 : 4 }];
    process.nextTick(() => callback(null, answer));
  };
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 500) : 'The request failed';
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code.slice(0, 60) : 'ERR_GATEHOUSE_OUTBOUND';
}
