import { randomBytes, createHash } from 'node:crypto';
import { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as undiciRequest } from 'undici';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { Caller, newTenant } from '../support/application-fixtures';

jest.setTimeout(30_000);

const LIMIT = 64 * 1024;
const BIG = randomBytes(4 * 1024 * 1024);

/**
 * The destination's answer as the data plane hands it on (destination-call.ts): streamed to the client as it comes
 * without a transform, whatever its size, with back-pressure both ways; a destination that fails mid-body cuts the
 * client's response; a client that goes away ends the destination's answer; and, for a response transform, read whole
 * within BODY_LIMIT_BYTES.
 */
describe('proxy invocation: the destination answer', () => {
  let t: TestApp;
  let base: string;
  let upstream: Upstream;
  let owner: Caller;
  /** Resolved when the destination's endless answer is closed under it (the client went away). */
  let endlessClosed: Promise<number>;
  let endlessStarted: () => void;

  beforeAll(async () => {
    let closedWith: (bytes: number) => void;
    endlessClosed = new Promise((resolve) => (closedWith = resolve));
    upstream = await startUpstream((req, res) => {
      req.resume();
      const path = req.url!.split('?')[0]!;
      if (path.endsWith('/big')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG.length });
        return void writeSlowly(res, BIG);
      }
      if (path.endsWith('/broken')) {
        // A head and part of the body, then the connection dies.
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 100_000 });
        res.write(randomBytes(10_000));
        return void setTimeout(() => res.socket?.destroy(), 50);
      }
      if (path.endsWith('/endless')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        let sent = 0;
        const more = () => {
          while (!res.destroyed && res.write(randomBytes(16 * 1024))) sent += 16 * 1024;
        };
        res.on('drain', more);
        res.on('close', () => closedWith(sent));
        endlessStarted();
        return more();
      }
      if (path.endsWith('/over')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': LIMIT + 10 });
        return res.end(`"${'x'.repeat(LIMIT + 8)}"`);
      }
      if (path.endsWith('/drop')) {
        // Reads the request to its end, then the connection dies without an answer.
        return void req.on('end', () => req.socket.destroy());
      }
      if (path.endsWith('/empty')) {
        res.writeHead(204, { 'x-upstream': 'yes' });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', BODY_LIMIT_BYTES: String(LIMIT), REACTOR_POOL_SIZE: '1' });
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    owner = await newTenant(t);
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  async function proxy(body: Record<string, unknown> = {}): Promise<string> {
    const res = await t
      .http()
      .post('/proxies')
      .set('svc-api-key', owner.key)
      .send({ name: 'stream', destination_url: `${upstream.origin}/`, require_auth: false, ...body });
    expect(res.status).toBe(201);
    return res.body.key;
  }

  it('streams an answer far over BODY_LIMIT_BYTES to a slow reader, byte for byte', async () => {
    const key = await proxy();
    const res = await undiciRequest(`${base}/proxy/big`, { headers: { 'svc-proxy-key': key }, highWaterMark: 1024 });
    expect(res.statusCode).toBe(200);
    expect(res.headers['svc-proxy-destination-status']).toBe('200');
    expect(res.headers['content-length']).toBe(String(BIG.length));
    const hash = createHash('sha256');
    let received = 0;
    for await (const chunk of res.body) {
      hash.update(chunk as Buffer);
      received += (chunk as Buffer).length;
      // A slow client: the proxy must hold the destination back, not buffer the whole answer.
      if (received % (512 * 1024) < (chunk as Buffer).length) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(received).toBe(BIG.length);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(BIG).digest('hex'));
  });

  it('cuts the client response when the destination fails mid-body (never a 200 that looks complete)', async () => {
    const key = await proxy();
    const outcome = await undiciRequest(`${base}/proxy/broken`, { headers: { 'svc-proxy-key': key } }).then(
      async (res) => {
        expect(res.statusCode).toBe(200);
        return res.body.arrayBuffer().then(
          (body) => `complete ${body.byteLength}`,
          () => 'cut',
        );
      },
      () => 'cut',
    );
    expect(outcome).toBe('cut');
    // The service goes on serving.
    await t.http().get('/proxy/ok').set('svc-proxy-key', key).expect(200);
  });

  it("ends the destination's answer when the client goes away", async () => {
    const key = await proxy();
    const started = new Promise<void>((resolve) => (endlessStarted = resolve));
    const res = await undiciRequest(`${base}/proxy/endless`, { headers: { 'svc-proxy-key': key } });
    expect(res.statusCode).toBe(200);
    await started;
    let read = 0;
    for await (const chunk of res.body) {
      read += (chunk as Buffer).length;
      if (read > 256 * 1024) break; // leaving the loop destroys the body: the client goes away
    }
    const sent = await endlessClosed;
    // Closed with the client, not after an unbounded answer was buffered.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it("a destination that drops the connection after reading the request is a 502, with or without a body (never the caller's fault)", async () => {
    const key = await proxy();
    for (const res of [
      await t
        .http()
        .post('/proxy/drop')
        .set('svc-proxy-key', key)
        .send({ card: 'x'.repeat(10_000) }),
      await t.http().post('/proxy/drop').set('svc-proxy-key', key).set('content-type', 'text/plain').send('x'),
      await t.http().post('/proxy/drop').set('svc-proxy-key', key),
    ]) {
      expect(res.status).toBe(502);
      expect(res.body.detail).toBe('The destination could not be reached');
    }
  });

  it('a destination answer without a body (204) is passed on as it is', async () => {
    const key = await proxy();
    const res = await t.http().get('/proxy/empty').set('svc-proxy-key', key).expect(204);
    expect(res.headers['x-upstream']).toBe('yes');
    expect(res.headers['svc-proxy-destination-status']).toBe('204');
  });

  describe('with a response transform', () => {
    const echo = {
      response_transform: { code: 'module.exports = async (req) => ({ status: req.args.status, body: { size: JSON.stringify(req.args.body).length } });' },
    };

    it('gives the transform the whole answer', async () => {
      const key = await proxy(echo);
      const res = await t.http().get('/proxy/ok').set('svc-proxy-key', key).expect(200);
      expect(res.body).toEqual({ size: '{"ok":true}'.length });
      expect(res.headers['svc-proxy-destination-status']).toBe('200');
    });

    it('502 for an answer over BODY_LIMIT_BYTES', async () => {
      const key = await proxy(echo);
      const res = await t.http().get('/proxy/over').set('svc-proxy-key', key).expect(502);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toContain('too large for the response transform');
    });

    it('502 when the destination fails mid-body', async () => {
      const key = await proxy(echo);
      const res = await t.http().get('/proxy/broken').set('svc-proxy-key', key).expect(502);
      expect(res.body.detail).toBe('The destination could not be reached');
    });
  });
});

/** Writes `bytes` in 64 KiB pieces, waiting for 'drain' whenever the socket is full. */
function writeSlowly(res: ServerResponse, bytes: Buffer): void {
  let at = 0;
  const more = () => {
    while (at < bytes.length) {
      const piece = bytes.subarray(at, at + 64 * 1024);
      at += piece.length;
      if (!res.write(piece)) return void res.once('drain', more);
    }
    res.end();
  };
  more();
}
