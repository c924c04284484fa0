import { randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import { generateSigningSecret, Log, LogStream, StreamNotDeliveredError } from '@gatehouse/domain';
import { tokenReads } from '@gatehouse/domain/testing';
import { KindLogStreamTransport, StreamOutboundGuard } from '@gatehouse/jobs';
import { HttpReceiver } from './support/http-receivers';
import { makeTestCa, TestCa } from './support/test-ca';

// The https transport's kept connection against the destination guard: a batch on the kept connection asks the guard
// nothing (that connection was checked when it was opened); every new connection resolves through the guard again,
// and a guard that now refuses the address stops the batch before it leaves.

describe('log stream connections and the destination guard', () => {
  let ca: TestCa;
  let receiver: HttpReceiver;
  let refuse = false;
  let lookups = 0;
  const guard: StreamOutboundGuard = {
    allowsAddress: () => !refuse,
    lookup: (hostname, options, callback) => {
      lookups++;
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, []);
        if (refuse) return callback(Object.assign(new Error(`refused ${hostname}`), { code: 'GATEHOUSE_DESTINATION_REFUSED' }), []);
        const v4 = addresses.filter((a) => a.family === 4);
        if ((options as { all?: boolean }).all) return callback(null, v4);
        callback(null, v4[0]!.address, 4);
      });
    },
  };
  const transport = new KindLogStreamTransport({ guard, timeoutMs: 5000 });

  beforeAll(async () => {
    ca = makeTestCa();
    receiver = await new HttpReceiver('https', ca).start();
  });
  afterAll(async () => {
    transport.close();
    await receiver?.stop();
  });

  function batch(tenantId: string, from: number, n: number): Log[] {
    return tokenReads(tenantId, n, new Date(), from).map((event, i) => ({ ...event, message: `log ${from + i}`, position: from + i, hash: '00'.repeat(32) }));
  }

  it('keeps one checked connection, and checks again on reconnecting', async () => {
    const secret = generateSigningSecret();
    receiver.credential = secret;
    const tenantId = randomUUID();
    const stream = {
      id: randomUUID(),
      tenantId,
      kind: 'https',
      settings: { url: `https://localhost:${receiver.port}/hook`, tls_ca: ca.ca, batch_size: 10 },
      secrets: { signing_secret: secret },
    } as unknown as LogStream;

    await transport.send(stream, batch(tenantId, 1, 10));
    await transport.send(stream, batch(tenantId, 11, 10));
    await transport.send(stream, batch(tenantId, 21, 10));
    expect(receiver.positions()).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(receiver.connections).toBe(1);
    expect(lookups).toBe(1);

    // The receiver restarts: its connections are gone, the next batch opens a new one through the guard.
    await receiver.stop();
    await receiver.start(receiver.port);
    await transport.send(stream, batch(tenantId, 31, 10));
    expect(lookups).toBe(2);
    expect(receiver.connections).toBe(2);

    // The name now resolves to an address the guard refuses: a new connection is not made, nothing is sent.
    await receiver.stop();
    await receiver.start(receiver.port);
    refuse = true;
    await expect(transport.send(stream, batch(tenantId, 41, 10))).rejects.toBeInstanceOf(StreamNotDeliveredError);
    expect(lookups).toBe(3);
    expect(receiver.connections).toBe(2);
    expect(receiver.positions()).toHaveLength(40);
  });
});
