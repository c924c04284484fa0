import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { createServer, Server } from 'node:http';
import express from 'express';
import { PreparedJson, sendPreparedJson } from './prepared-json';

/** The whole answer to `request` (a raw HTTP/1.1 request that closes its connection), bytes as sent, Date blanked. */
async function rawAnswer(port: number, request: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(request);
  await once(socket, 'close');
  return Buffer.concat(chunks)
    .toString('latin1')
    .replace(/\r\nDate: [^\r]+\r\n/, '\r\nDate: -\r\n');
}

const VALUES: Record<string, object> = {
  small: { id: '8d0c1c1e-6a57-4c4b-9d1e-3f1c2b3a4d5e', name: 'backend', permissions: ['token:read'], rules: [] },
  // Non-ASCII: Content-Length counts bytes, not characters.
  unicode: { name: 'ünïcødé ✓ 🚀', description: 'Ω'.repeat(300) },
  // 1000 characters and more: res.send writes a Buffer instead of the string.
  large: { name: 'x', rules: Array.from({ length: 20 }, (_, i) => ({ priority: i, description: 'd'.repeat(80) })) },
};

describe('sendPreparedJson', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    // What the guard sets before a handler answers: headers of its own, in order.
    app.use((_req, res, next) => {
      res.setHeader('x-request-id', 'req-1');
      res.setHeader('ratelimit-policy', '"application";q=10;w=60');
      next();
    });
    app.get('/json/:name', (req, res) => void res.json(VALUES[req.params.name!]));
    app.get('/prepared/:name', (req, res) => sendPreparedJson(res, new PreparedJson(VALUES[req.params.name!]!)));
    app.get('/json-typed/:name', (req, res) => void res.type('application/vnd.x+json').status(203).json(VALUES[req.params.name!]));
    app.get('/prepared-typed/:name', (req, res) =>
      sendPreparedJson(res.type('application/vnd.x+json').status(203), new PreparedJson(VALUES[req.params.name!]!)),
    );
    server = createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const cases: Array<[string, string, string, string]> = [];
  for (const name of Object.keys(VALUES)) {
    cases.push([`GET ${name}`, name, 'GET', '']);
    cases.push([`HEAD ${name}`, name, 'HEAD', '']);
    cases.push([`GET ${name}, If-None-Match: * (a 304)`, name, 'GET', 'If-None-Match: *\r\n']);
    cases.push([`GET ${name}, If-Modified-Since`, name, 'GET', 'If-Modified-Since: Tue, 01 Jan 2030 00:00:00 GMT\r\n']);
  }

  it.each(cases)('answers %s byte for byte as res.json does (also after a status and type of its own)', async (_label, name, method, headers) => {
    for (const [json, prepared] of [
      ['json', 'prepared'],
      ['json-typed', 'prepared-typed'],
    ]) {
      const request = (route: string) => `${method} /${route}/${name} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`;
      const expected = await rawAnswer(port, request(json!));
      expect(expected).toMatch(/^HTTP\/1\.1 (200|203|304) /);
      expect(await rawAnswer(port, request(prepared!))).toBe(expected);
    }
  });

  it('serialises once, as res.json would', () => {
    const body = new PreparedJson(VALUES.unicode!);
    expect(body.text).toBe(JSON.stringify(VALUES.unicode));
    expect(body.contentLength).toBe(String(Buffer.byteLength(body.text)));
    expect(typeof body.chunk).toBe('string');
    expect(Buffer.isBuffer(new PreparedJson(VALUES.large!).chunk)).toBe(true);
  });
});
