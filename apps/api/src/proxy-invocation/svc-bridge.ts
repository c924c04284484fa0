import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Pool } from 'undici';
import { AuthenticateSvcBridgeCall, AuthenticationError, pathEscape, Principal, Proxy } from '@gatehouse/domain';
import { isJsonMediaType, transformBodyOf, type SvcBridge, type SvcRequest, type SvcResponse } from '@gatehouse/reactor';
import { PrincipalResolver, PrincipalResolvers } from '../auth/principal-resolver';

const SECRET_HEADER = 'x-gatehouse-svc-secret';
const TENANT_HEADER = 'x-gatehouse-svc-tenant';
const APPLICATION_HEADER = 'x-gatehouse-svc-application';
/** The application that last wrote the proxy, whose authority over APPLICATION_HEADER's is checked again per call. */
const WRITER_HEADER = 'x-gatehouse-svc-writer';

/** The first path segments `svc` may call: this service's own API, and nothing else (never /proxy). */
const SVC_ROUTES = new Set(['applications', 'proxies', 'logs', 'permissions', 'tokens', 'tokenize', 'detokenize']);
/** Routes under /v2 `svc` may call (the token search). */
const SVC_V2_ROUTES = new Set(['tokens']);
const SVC_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const PATH_CHARACTERS = /^\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/]*$/;
const MAX_PATH_LENGTH = 2000;

/** The bridge refusing a call on purpose; its message is meant for the transform (the reactor passes it on). */
export class SvcRequestRefusedError extends Error {
  readonly expose = true;
  readonly status = 400;
}

/**
 * The `svc` client of transform code acts as the proxy's application, whose plaintext key is not stored.
 * So it calls this service's API through a listener bound to 127.0.0.1 on an ephemeral port, with a
 * per-process random secret. The ApiKeyGuard accepts the secret only on connections that arrived on that
 * listener, and resolves the application again on every call (through the application repository, whose
 * cache is invalidated like keys), so a delete or a permission change applies to the very next svc call.
 */
@Injectable()
export class SvcBridgeListener implements PrincipalResolver, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly secret = Buffer.from(randomBytes(32).toString('base64url'));
  private readonly internalSockets = new WeakSet<Socket>();
  private server?: Server;
  private pool?: Pool;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly authenticate: AuthenticateSvcBridgeCall,
    resolvers: PrincipalResolvers,
  ) {
    resolvers.register(this);
  }

  async onApplicationBootstrap(): Promise<void> {
    const server = createServer({ keepAliveTimeout: 30_000 }, this.adapterHost.httpAdapter.getInstance());
    server.on('connection', (socket: Socket) => this.internalSockets.add(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    server.unref();
    this.server = server;
    const { port } = server.address() as AddressInfo;
    this.pool = new Pool(`http://127.0.0.1:${port}`, { connections: 32, keepAliveTimeout: 30_000 });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool?.destroy();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * The principal of a svc call, for the ApiKeyGuard (through PrincipalResolvers): undefined when the request did not arrive on the
   * internal listener (then only SVC-API-KEY counts), a 401 when it did without the secret.
   */
  principalOf(req: IncomingMessage): Promise<Principal> | undefined {
    return this.internalSockets.has(req.socket) ? this.svcPrincipalOf(req) : undefined;
  }

  private async svcPrincipalOf(req: IncomingMessage): Promise<Principal> {
    const offered = req.headers[SECRET_HEADER];
    if (typeof offered !== 'string' || !sameSecret(Buffer.from(offered), this.secret)) {
      throw new AuthenticationError('The internal listener admits svc calls only');
    }
    const tenantId = req.headers[TENANT_HEADER];
    const applicationId = req.headers[APPLICATION_HEADER];
    if (typeof tenantId !== 'string' || typeof applicationId !== 'string') {
      throw new AuthenticationError("The proxy's application no longer exists");
    }
    const writerId = req.headers[WRITER_HEADER];
    return this.authenticate.execute(tenantId, applicationId, typeof writerId === 'string' && writerId !== '' ? writerId : null);
  }

  /** The svc client handed to a transform of `proxy`; undefined when the proxy names no application. */
  bridgeFor(proxy: Proxy): SvcBridge | undefined {
    const applicationId = proxy.applicationId;
    if (!applicationId) return undefined;
    return { request: (req) => this.send(proxy.tenantId, applicationId, proxy.modifiedBy, req) };
  }

  private async send(tenantId: string, applicationId: string, writerId: string | null, req: SvcRequest): Promise<SvcResponse> {
    const pool = this.pool;
    if (!pool) throw new SvcRequestRefusedError('svc is not available while the service starts or stops');
    const method = String(req.method ?? 'GET').toUpperCase();
    if (!SVC_METHODS.has(method)) throw new SvcRequestRefusedError(`svc does not support the method ${method.slice(0, 20)}`);
    const path = checkedPath(req.path) + queryString(req.query);
    const headers: Record<string, string> = {
      [SECRET_HEADER]: this.secret.toString(),
      [TENANT_HEADER]: tenantId,
      [APPLICATION_HEADER]: applicationId,
      [WRITER_HEADER]: writerId ?? '',
      accept: 'application/json',
    };
    let body: string | undefined;
    if (req.body !== undefined && method !== 'GET' && method !== 'DELETE') {
      body = JSON.stringify(req.body);
      headers['content-type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    }
    const res = await pool.request({ method: method as 'GET', path, headers, body, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const raw = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, body: transformBodyOf(raw.toString('utf8'), isJsonMediaType(res.headers['content-type'])) };
  }
}

function sameSecret(offered: Buffer, secret: Buffer): boolean {
  return offered.length === secret.length && timingSafeEqual(offered, secret);
}

/** A path of this service's API, relative, and contained as a proxy's path must be (pathEscape); throws otherwise. */
export function checkedPath(path: unknown): string {
  if (typeof path !== 'string' || path.length > MAX_PATH_LENGTH || !PATH_CHARACTERS.test(path) || path.startsWith('//')) {
    throw new SvcRequestRefusedError('svc paths are paths of this service, such as /applications/{id}');
  }
  const escape = pathEscape(path);
  if (escape !== undefined) throw new SvcRequestRefusedError(`svc paths are paths of this service; this one ${escape}`);
  const segments = path.slice(1).split('/');
  let first: string;
  let second: string;
  try {
    first = decodeURIComponent(segments[0] ?? '').toLowerCase();
    second = decodeURIComponent(segments[1] ?? '').toLowerCase();
  } catch {
    throw new SvcRequestRefusedError('svc paths must be validly percent-encoded');
  }
  if (!(SVC_ROUTES.has(first) || (first === 'v2' && SVC_V2_ROUTES.has(second)))) {
    throw new SvcRequestRefusedError(`svc reaches only ${[...SVC_ROUTES, 'v2/tokens'].map((r) => `/${r}`).join(', ')}`);
  }
  return path;
}

function queryString(query: SvcRequest['query']): string {
  if (!query || typeof query !== 'object') return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
