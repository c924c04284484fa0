import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { TestCa } from './test-ca';

/** A streamed record as a receiver sees it. */
export interface ReceivedRecord {
  id: string;
  tenant_id: string;
  position: number;
  hash: string;
  message: string;
  [field: string]: unknown;
}

export type ReceiverKind = 'https' | 'splunk_hec' | 'datadog';

/**
 * A local HTTPS receiver speaking one of the streams' HTTP contracts, checking what a real one checks:
 * - https: the Standard Webhooks signature, verified with the specification's own library and the stream's secret;
 * - splunk_hec: `POST /services/collector/event`, `Authorization: Splunk <token>`, concatenated event objects;
 *   answers `{"text":"Success","code":0}`;
 * - datadog: `POST /api/v2/logs`, `DD-API-KEY`, a JSON array of at most 1000 logs; answers 202 `{}`.
 * Refused requests answer 401/403/400 and record nothing.
 */
export class HttpReceiver {
  readonly records: ReceivedRecord[] = [];
  readonly requests: { headers: IncomingMessage['headers']; body: string }[] = [];
  readonly refusals: string[] = [];
  /** Requests being handled right now, and the most at once. */
  inFlight = 0;
  maxInFlight = 0;
  /** Called before answering: a test can hold a request (a slow receiver) or fail it. */
  hold?: (body: string) => Promise<void>;
  /** Called after the records are stored, before answering: the batch arrived, its acknowledgement has not. */
  holdAfterStore?: (body: string) => Promise<void>;
  /** Answer this status instead (a receiver in trouble). */
  failWith?: number;
  /** The credential a request must carry (the webhook secret, the HEC token, the Datadog key). */
  credential = '';
  /** TLS connections the receiver accepted (a stream keeps its connection between batches). */
  connections = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    readonly kind: ReceiverKind,
    private readonly ca: TestCa,
  ) {}

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<this> {
    const server = createServer({ key: this.ca.key, cert: this.ca.cert }, (req, res) => void this.handle(req, res));
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      this.connections++;
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Stops listening and cuts every connection: the receiver is down. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  positions(): number[] {
    return this.records.map((r) => r.position);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      this.requests.push({ headers: req.headers, body });
      if (this.hold) await this.hold(body);
      if (this.failWith) return answer(res, this.failWith, { error: 'unavailable' });
      const refusal = this.check(req, body);
      if (refusal) {
        this.refusals.push(refusal.reason);
        return answer(res, refusal.status, { error: refusal.reason });
      }
      this.records.push(...this.parse(body));
      if (this.holdAfterStore) await this.holdAfterStore(body);
      if (this.kind === 'splunk_hec') return answer(res, 200, { text: 'Success', code: 0 });
      if (this.kind === 'datadog') return answer(res, 202, {});
      return answer(res, 204);
    } finally {
      this.inFlight--;
    }
  }

  private check(req: IncomingMessage, body: string): { status: number; reason: string } | undefined {
    if (req.method !== 'POST') return { status: 405, reason: `method ${req.method}` };
    if (this.kind === 'https') {
      try {
        new Webhook(this.credential).verify(body, req.headers as Record<string, string>);
      } catch (error) {
        return { status: 401, reason: `signature: ${(error as Error).message}` };
      }
      return undefined;
    }
    if (this.kind === 'splunk_hec') {
      if (req.url !== '/services/collector/event') return { status: 404, reason: `path ${req.url}` };
      if (req.headers.authorization !== `Splunk ${this.credential}`) return { status: 401, reason: 'token' };
      return undefined;
    }
    if (req.url !== '/api/v2/logs') return { status: 404, reason: `path ${req.url}` };
    if (req.headers['dd-api-key'] !== this.credential) return { status: 403, reason: 'api key' };
    if (!String(req.headers['content-type']).startsWith('application/json')) return { status: 400, reason: 'content type' };
    return undefined;
  }

  private parse(body: string): ReceivedRecord[] {
    if (this.kind === 'https') {
      const payload = JSON.parse(body) as { type: string; data: { records: ReceivedRecord[] } };
      if (payload.type !== 'audit_log.batch') throw new Error(`unexpected type ${payload.type}`);
      return payload.data.records;
    }
    if (this.kind === 'splunk_hec') {
      // HEC takes event objects one after another (whitespace between them allowed).
      return body
        .split('\n')
        .filter((line) => line.trim().length > 0)
        .map((line) => {
          const event = JSON.parse(line) as { time: number; source: string; sourcetype: string; event: ReceivedRecord };
          if (typeof event.time !== 'number' || !event.sourcetype) throw new Error('an HEC event without time or sourcetype');
          return event.event;
        });
    }
    const logs = JSON.parse(body) as (ReceivedRecord & { ddsource: string; service: string })[];
    if (!Array.isArray(logs) || logs.length > 1000) throw new Error('Datadog takes an array of at most 1000 logs');
    return logs.map(({ ddsource, service, ddtags, hostname, ...record }) => {
      void ddsource;
      void service;
      void ddtags;
      void hostname;
      return record as ReceivedRecord;
    });
  }
}

function answer(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}
