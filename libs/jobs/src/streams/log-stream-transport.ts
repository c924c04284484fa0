import { createHmac } from 'node:crypto';
import { Log, LogStream, LogStreamTransport } from '@gatehouse/domain';
import { post, PostOptions, StreamAgents, StreamOutboundGuard } from './outbound';
import { toStreamRecord } from './stream-records';
import { sendSyslog } from './syslog-sender';

export interface TransportOptions {
  guard: StreamOutboundGuard;
  /** How long one batch may take (connect, send, answer). */
  timeoutMs: number;
}

/** The id of a batch: the same on every attempt of the same positions, so a receiver can drop a repeat. */
export function batchId(stream: LogStream, logs: Log[]): string {
  return `msg_${stream.id.replace(/-/g, '')}_${logs[0]!.position}_${logs[logs.length - 1]!.position}`;
}

/**
 * Sends a batch the way the stream's kind says (docs/audit-trail.md#streams):
 * - https: `{"type":"audit_log.batch","timestamp","data":{"stream_id","tenant_id","records":[...]}}`, signed per the
 *   Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature) with the stream's secret;
 * - splunk_hec: one event object per log, concatenated, to `/services/collector/event` with `Authorization: Splunk`;
 * - datadog: a JSON array of logs to `/api/v2/logs` with `DD-API-KEY`;
 * - syslog: RFC 5424 messages, octet-counted, over TLS (RFC 5425) or plain TCP where allowed.
 * Every record carries its chain `position` and `hash`.
 */
export class KindLogStreamTransport extends LogStreamTransport {
  /** The HTTP kinds' kept connections, per stream (syslog acknowledges by closing: one connection per batch). */
  private readonly agents = new StreamAgents();

  constructor(private readonly options: TransportOptions) {
    super();
  }

  override close(): void {
    this.agents.destroy();
  }

  async send(stream: LogStream, logs: Log[]): Promise<void> {
    if (logs.length === 0) return;
    const s = stream.settings;
    const ca = typeof s.tls_ca === 'string' ? s.tls_ca : undefined;
    const { guard, timeoutMs } = this.options;
    const options = (headers: Record<string, string>): PostOptions => ({
      headers,
      ca,
      timeoutMs,
      agent: this.agents.for(stream.id, new URL(String(s.url)).protocol),
    });
    switch (stream.kind) {
      case 'https': {
        const timestamp = new Date();
        const body = JSON.stringify({
          type: 'audit_log.batch',
          timestamp: timestamp.toISOString(),
          data: { stream_id: stream.id, tenant_id: stream.tenantId, records: logs.map(toStreamRecord) },
        });
        const id = batchId(stream, logs);
        const seconds = String(Math.floor(timestamp.getTime() / 1000));
        const headers = { 'webhook-id': id, 'webhook-timestamp': seconds, 'webhook-signature': signWebhook(stream.secrets.signing_secret!, id, seconds, body) };
        await post(guard, String(s.url), body, options(headers));
        return;
      }
      case 'splunk_hec': {
        const body = logs
          .map((log) =>
            JSON.stringify({
              time: log.createdAt.getTime() / 1000,
              ...(s.host === undefined ? {} : { host: s.host }),
              source: s.source,
              sourcetype: s.sourcetype,
              ...(s.index === undefined ? {} : { index: s.index }),
              event: toStreamRecord(log),
            }),
          )
          .join('\n');
        const answer = await post(guard, `${String(s.url)}/services/collector/event`, body, options({ authorization: `Splunk ${stream.secrets.token}` }));
        // HEC answers {"text":"Success","code":0}; any other code is a refusal even under a 2xx.
        const code = parseCode(answer.body);
        if (code !== undefined && code !== 0) throw new Error(`the Splunk HTTP Event Collector answered code ${code}`);
        return;
      }
      case 'datadog': {
        const body = JSON.stringify(
          // The log's own fields are the attributes (its `message` the Datadog message), beside the reserved ones.
          logs.map((log) => ({
            ddsource: s.source,
            service: s.service,
            ...(s.tags === undefined ? {} : { ddtags: s.tags }),
            ...(s.hostname === undefined ? {} : { hostname: s.hostname }),
            ...toStreamRecord(log),
          })),
        );
        await post(guard, `${String(s.url)}/api/v2/logs`, body, options({ 'dd-api-key': stream.secrets.api_key! }));
        return;
      }
      case 'syslog':
        await sendSyslog(
          guard,
          {
            host: String(s.host),
            port: Number(s.port),
            tls: s.tls !== false,
            ca,
            appName: String(s.app_name),
            hostname: String(s.hostname),
            facility: Number(s.facility),
          },
          logs,
          timeoutMs,
        );
        return;
    }
  }
}

/**
 * The Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` under the secret's
 * bytes (the base64 after `whsec_`). Node's HMAC: the specification library's own JavaScript SHA-256 took 20 to 30 ms
 * for a batch of 1000 logs, more than the rest of the batch's sending.
 */
export function signWebhook(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
}

function parseCode(body: string): number | undefined {
  try {
    const parsed = JSON.parse(body) as { code?: unknown };
    return typeof parsed.code === 'number' ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}
