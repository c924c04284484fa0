import { connect, Socket } from 'node:net';
import { ServiceProcess, startServiceProcess } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';

/** What came back on a raw connection until the server closed it (or 10 s passed). */
interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parse(raw: string): RawReply[] {
  const replies: RawReply[] = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    const length = Number(headers['content-length'] ?? 0);
    replies.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.slice(headEnd + 4, headEnd + 4 + length) });
    rest = rest.slice(headEnd + 4 + length);
  }
  return replies;
}

/** Writes `chunks` in order on one connection (a pause between them) and collects everything the server sends. */
function exchange(port: number, chunks: string[]): Promise<RawReply[]> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let raw = '';
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on('data', (d: Buffer) => (raw += d.toString('latin1')));
    socket.on('error', () => undefined); // a reset after the answer is fine: what was read is what counts
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parse(raw));
    });
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) break;
        socket.write(chunk);
        await new Promise((r) => setTimeout(r, 150));
      }
    });
    socket.on('timeout', reject);
  });
}

function expectProblemReply(reply: RawReply | undefined, status: number): void {
  expect(reply).toBeDefined();
  expect(reply!.status).toBe(status);
  expect(reply!.headers['content-type']).toBe('application/problem+json');
  const body = JSON.parse(reply!.body);
  expect(body).toEqual({
    type: `https://gatehouse.dev/problems/${status}`,
    title: expect.any(String),
    status,
    detail: expect.any(String),
    instance: reply!.headers['x-request-id'],
  });
  expect(body.title).not.toBe('Error');
}

/** Errors Node's HTTP parser raises before the application sees the request, on the built service (raw sockets). */
describe('errors before the application sees the request', () => {
  let service: ServiceProcess;
  let key: string;
  beforeAll(async () => {
    const admin = await startTestApp();
    key = (await admin.tenant()).key;
    await admin.close();
    service = await startServiceProcess({ DATABASE_URL: TEST_DATABASE_URL }, ['--api-only']);
  }, 60_000);
  afterAll(() => service?.stop());

  const big = 'a'.repeat(20 * 1024);
  it.each([
    ['a header over the head limit', 431, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`],
    ['a request line over the head limit', 431, `GET /${big} HTTP/1.1\r\nHost: x\r\n\r\n`],
    [
      'many headers over the head limit',
      431,
      `GET /health/live HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 2000 }, (_, i) => `X-H${i}: vvvvvvvvvv\r\n`).join('')}\r\n`,
    ],
    ['garbage instead of a request line', 400, 'HELLO THERE\r\n\r\n'],
    ['an unknown method', 400, 'BREW /health/live HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a space in a header name', 400, 'GET /health/live HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'],
    ['a control character in a header value', 400, 'GET /health/live HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n'],
    ['both Content-Length and Transfer-Encoding', 400, 'POST /applications HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}'],
    ['a Content-Length that is not a number', 400, 'POST /applications HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n'],
    ['an unsupported HTTP version', 400, 'GET /health/live HTTP/9.9\r\nHost: x\r\n\r\n'],
    // Met in the body, once the application has the head: Node dropped the connection without a word.
    [
      'a chunk size that is not hexadecimal',
      400,
      'POST /applications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    ],
    [
      'a chunk size that overflows',
      400,
      'POST /applications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n{}\r\n0\r\n\r\n',
    ],
    // Node answered it with an empty 400.
    ['an HTTP/1.1 request without Host', 400, 'GET /health/live HTTP/1.1\r\n\r\n'],
    ['an HTTP/1.1 POST without Host', 400, 'POST /applications HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'],
    // RFC 9112 3.2: more than one Host, or one that is not host[:port] (Node took the first, or any value).
    ['two Host headers', 400, 'GET /health/live HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n'],
    ['a Host with a path', 400, 'GET /health/live HTTP/1.1\r\nHost: a.example/evil\r\n\r\n'],
    ['a Host with credentials', 400, 'GET /health/live HTTP/1.1\r\nHost: user@a.example\r\n\r\n'],
  ])('%s is a %s with a problem+json body', async (_, status, request) => {
    const replies = await exchange(service.port, [request]);
    expect(replies).toHaveLength(1);
    expectProblemReply(replies[0], status);
  });

  it('an Expect other than 100-continue is a 417 with a problem+json body, and nothing is created', async () => {
    const body = JSON.stringify({ name: 'expected', type: 'private', permissions: ['token:read'] });
    const replies = await exchange(service.port, [
      `POST /applications HTTP/1.1\r\nHost: x\r\nSVC-API-KEY: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 200-ok\r\n\r\n${body}`,
    ]);
    expectProblemReply(replies[0], 417);
    const list = await fetch(`${service.baseUrl}/applications?size=100`, { headers: { 'SVC-API-KEY': key } });
    expect(((await list.json()) as { data: { name: string }[] }).data.map((a) => a.name)).not.toContain('expected');
  });

  it("an HTTP/1.0 request without Host is still served (Host is HTTP/1.1's requirement), and so are the forms of a Host", async () => {
    const replies = await exchange(service.port, ['GET /health/live HTTP/1.0\r\n\r\n']);
    expect(replies.map((r) => r.status)).toEqual([200]);
    for (const host of ['localhost', 'api.example.com:8443', '127.0.0.1:3000', '[::1]:3000', '[fd00::2]', 'xn--bcher-kva.example']) {
      const [reply] = await exchange(service.port, [`GET /health/live HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`]);
      expect({ host, status: reply?.status }).toEqual({ host, status: 200 });
    }
  });

  it('the body of a missing Host or a bad chunk names what is wrong', async () => {
    const [noHost] = await exchange(service.port, ['GET /health/live HTTP/1.1\r\n\r\n']);
    expect(JSON.parse(noHost!.body).detail).toBe('An HTTP/1.1 request needs a Host header');
    const [badChunk] = await exchange(service.port, [
      'POST /applications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    ]);
    expect(JSON.parse(badChunk!.body).detail).toMatch(/^The chunked request body is not valid/);
  });

  it('Expect: 100-continue still works', async () => {
    const body = JSON.stringify({ name: 'continued', type: 'private', permissions: ['token:read'] });
    const replies = await exchange(service.port, [
      `POST /applications HTTP/1.1\r\nHost: x\r\nSVC-API-KEY: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      body,
    ]);
    expect(replies.map((r) => r.status)).toEqual([100, 201]);
  });

  it('after a complete answer on a keep-alive connection, an oversized head still gets its problem body', async () => {
    const replies = await exchange(service.port, [
      'GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n',
      `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`,
    ]);
    expect(replies.map((r) => r.status)).toEqual([200, 431]);
    expectProblemReply(replies[1], 431);
  });

  it('logs each refusal with its status and request id, never the request', async () => {
    const replies = await exchange(service.port, [`GET /health/live HTTP/1.1\r\nHost: x\r\nX-Secret: ${'s'.repeat(20 * 1024)}\r\n\r\n`]);
    const id = replies[0]!.headers['x-request-id']!;
    // Log lines reach stdout in batches (at most 200 ms late, more on a loaded machine): wait for this one.
    let line: string | undefined;
    for (let i = 0; i < 100 && !line; i++) {
      await new Promise((r) => setTimeout(r, 50));
      line = service
        .output()
        .split('\n')
        .find((l) => l.includes(id));
    }
    expect(JSON.parse(line!)).toMatchObject({ status: 431, code: 'HPE_HEADER_OVERFLOW', request_id: id, msg: 'request refused before routing' });
    expect(service.output()).not.toContain('sssssssssssssssss');
  });
});
