import { isIP, connect as netConnect, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Log } from '@gatehouse/domain';
import { StreamNotDeliveredError } from '@gatehouse/domain';
import { guardedConnection, StreamOutboundGuard } from './outbound';
import { toStreamRecord } from './stream-records';

export interface SyslogTarget {
  host: string;
  port: number;
  tls: boolean;
  ca?: string;
  appName: string;
  hostname: string;
  facility: number;
}

// RFC 5424 SD-ID with a private enterprise number: 32473 is the number RFC 5612 reserves for documentation and examples.
const SD_ID = 'gatehouse@32473';
const SEVERITY_INFO = 6;
const SEVERITY_NOTICE = 5;

/** An SD-PARAM value: `"`, `\` and `]` escaped (RFC 5424 section 6.3.3). */
function sdValue(value: string): string {
  return value.replace(/["\\\]]/g, (c) => `\\${c}`);
}

/** PRINTUSASCII without spaces, at most `max` characters, or the nil value `-`. */
function header(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '').slice(0, max);
  return clean.length > 0 ? clean : '-';
}

/**
 * One log as an RFC 5424 message: the time it was written, the app name, MSGID the operation, structured data with
 * its chain position, hash, id and tenant, and the message the log's JSON (with position and hash), UTF-8 with a BOM.
 */
export function syslogMessage(log: Log, target: Pick<SyslogTarget, 'appName' | 'hostname' | 'facility'>): Buffer {
  const severity = log.operation === 'read' ? SEVERITY_INFO : SEVERITY_NOTICE;
  const pri = target.facility * 8 + severity;
  const sd = `[${SD_ID} position="${log.position}" hash="${log.hash}" id="${log.id}" tenant_id="${sdValue(log.tenantId)}"]`;
  const head = `<${pri}>1 ${log.createdAt.toISOString()} ${header(target.hostname, 255)} ${header(target.appName, 48)} - ${header(log.operation, 32)} ${sd} `;
  return Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(toStreamRecord(log)), 'utf8')]);
}

/** Octet-counting framing (RFC 6587 section 3.4.1, the framing RFC 5425 uses): `MSG-LEN SP SYSLOG-MSG`. */
export function octetCounted(message: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${message.length} `, 'ascii'), message]);
}

/**
 * Sends a batch over one connection and ends it; resolves once the receiver closed its side after reading everything
 * (syslog has no acknowledgement of its own: a receiver that closes cleanly after our end has read all of it). A
 * connection that breaks, or a receiver that does not close within the timeout, rejects: the batch is sent again.
 */
export function sendSyslog(guard: StreamOutboundGuard, target: SyslogTarget, logs: Log[], timeoutMs: number): Promise<void> {
  const payload = Buffer.concat(logs.map((log) => octetCounted(syslogMessage(log, target))));
  let connection: ReturnType<typeof guardedConnection>;
  try {
    connection = guardedConnection(guard, target.host);
  } catch (error) {
    return Promise.reject(new StreamNotDeliveredError((error as Error).message));
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve();
    };
    const socket: Socket = target.tls
      ? tlsConnect(
          {
            host: target.host,
            port: target.port,
            ...(isIP(target.host) === 0 ? { servername: target.host } : {}),
            ...(target.ca ? { ca: target.ca } : {}),
            ...connection,
          },
          () => write(),
        )
      : netConnect({ host: target.host, port: target.port, ...connection }, () => write());
    const timer = setTimeout(
      () => done(new Error(`the syslog receiver ${target.host}:${target.port} did not take the batch within ${timeoutMs} ms`)),
      timeoutMs,
    );
    let ended = false;
    let writing = false;
    const write = () => {
      writing = true;
      socket.end(payload, () => (ended = true));
    };
    const where = `syslog ${target.host}:${target.port}: `;
    // Before the first byte was written nothing can have arrived; after it, some of the batch may have.
    socket.on('error', (error) => done(writing ? new Error(`${where}${error.message}`) : new StreamNotDeliveredError(`${where}${error.message}`)));
    socket.on('data', () => undefined);
    socket.on('end', () =>
      ended ? done() : done(new Error(`the syslog receiver ${target.host}:${target.port} closed the connection before the batch was sent`)),
    );
    socket.on('close', () =>
      ended ? done() : done(new Error(`the connection to the syslog receiver ${target.host}:${target.port} closed before the batch was sent`)),
    );
  });
}
