import type { LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { StreamNotDeliveredError } from '@gatehouse/domain';

/**
 * Where streams may connect: the proxies' destination policy (PROXY_ALLOW_HTTP, PROXY_ALLOWED_PRIVATE_CIDRS), given by
 * the app that runs the deliveries. `lookup` resolves a name and refuses when any address it resolves to is not
 * allowed (the connection then goes to exactly the address checked); literal addresses are judged by `allowsAddress`.
 */
export interface StreamOutboundGuard {
  allowsAddress(address: string): boolean;
  lookup: (
    hostname: string,
    options: object,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => void;
}

// Failures before any byte of the batch can have left: no connection, or no trusted TLS session.
const CONNECT_ERRORS =
  /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL|GATEHOUSE_DESTINATION_REFUSED|ERR_TLS_CERT_ALTNAME_INVALID|CERT_\w+|UNABLE_TO_\w+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)$/;

/** The error as a transport reports it: StreamNotDeliveredError when the receiver surely took nothing. */
export function connectFailure(error: Error, prefix = ''): Error {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const message = `${prefix}${error.message}`;
  if (CONNECT_ERRORS.test(code) || error instanceof StreamDestinationRefusedError) return new StreamNotDeliveredError(message);
  return prefix ? new Error(message) : error;
}

export class StreamDestinationRefusedError extends Error {
  constructor(host: string) {
    super(`the destination ${host} is a loopback, private, link-local or otherwise non-public address, which log streams may not reach`);
    this.name = 'StreamDestinationRefusedError';
  }
}

/** Connection options that obey the guard: refuses a literal address outside it, resolves names through it. */
export function guardedConnection(guard: StreamOutboundGuard, host: string): { lookup: StreamOutboundGuard['lookup'] } {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) !== 0 && !guard.allowsAddress(bare)) throw new StreamDestinationRefusedError(bare);
  return { lookup: guard.lookup };
}

export interface PostOptions {
  headers: Record<string, string>;
  /** Extra trusted CAs (PEM), for receivers with a private CA. */
  ca?: string;
  timeoutMs: number;
  /** The stream's kept connections (StreamAgents); without it, a connection of its own that is closed after the answer. */
  agent?: HttpAgent;
}

export interface PostAnswer {
  status: number;
  body: string;
}

/** How long a kept connection may stay idle (a receiver's own keep-alive hint, when shorter, wins). */
const IDLE_CONNECTION_MS = 15_000;

/**
 * Keep-alive connections, one pool of one connection per stream (a stream sends one batch at a time). Each new
 * connection resolves its host through the guard and goes to the address checked, so a kept connection is one that
 * was checked when it was opened, and every reconnection checks again. Pools left without connections are dropped.
 */
export class StreamAgents {
  private readonly agents = new Map<string, { protocol: string; agent: HttpAgent }>();

  for(streamId: string, protocol: string): HttpAgent {
    let entry = this.agents.get(streamId);
    if (entry?.protocol !== protocol) {
      entry?.agent.destroy();
      const options = { keepAlive: true, maxSockets: 1, maxFreeSockets: 1, timeout: IDLE_CONNECTION_MS };
      entry = { protocol, agent: protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options) };
      this.agents.set(streamId, entry);
    }
    for (const [id, other] of this.agents) {
      if (id !== streamId && Object.keys(other.agent.sockets).length === 0 && Object.keys(other.agent.freeSockets).length === 0) {
        other.agent.destroy();
        this.agents.delete(id);
      }
    }
    return entry.agent;
  }

  destroy(): void {
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/**
 * One POST; resolves with a 2xx answer, rejects on anything else (the error names the status, never a header or the
 * body sent). Redirects are not followed. The answer's body is read up to 64 KiB. A kept connection the receiver had
 * closed meanwhile (reset before any answer) is retried once on a new connection.
 */
export function post(guard: StreamOutboundGuard, url: string, body: string, options: PostOptions): Promise<PostAnswer> {
  const target = new URL(url);
  let connection: ReturnType<typeof guardedConnection>;
  try {
    connection = guardedConnection(guard, target.hostname);
  } catch (error) {
    return Promise.reject(new StreamNotDeliveredError((error as Error).message));
  }
  return postOnce(target, connection, body, options).catch((error: NodeJS.ErrnoException & { reusedSocket?: boolean }) => {
    if (!error.reusedSocket || error.code !== 'ECONNRESET') throw connectFailure(error);
    return postOnce(target, connection, body, options).catch((again: Error) => {
      throw connectFailure(again);
    });
  });
}

function postOnce(target: URL, connection: ReturnType<typeof guardedConnection>, body: string, options: PostOptions): Promise<PostAnswer> {
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = send(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...options.headers },
        ...connection,
        ...(options.ca && target.protocol === 'https:' ? { ca: options.ca } : {}),
        timeout: options.timeoutMs,
        agent: options.agent ?? false,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < 65_536) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status >= 200 && status < 300) resolve({ status, body: text });
          // An answer refusing the batch: the receiver did not take it.
          else reject(new StreamNotDeliveredError(`the receiver answered HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from the receiver within ${options.timeoutMs} ms`)));
    req.on('error', (error) => reject(Object.assign(error, { reusedSocket: req.reusedSocket && !answered })));
    req.end(body);
  });
}
