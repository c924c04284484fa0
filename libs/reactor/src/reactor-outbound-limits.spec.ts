import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as nodeRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { Reactor, type TransformInput } from './index';
import { okBody } from '../test/support/reactor-results';

const TIMEOUT_MS = 3000;

function input(tenantId: string, code: string, configuration: Record<string, string>): TransformInput {
  return { tenantId, code, args: { body: null, headers: {}, method: 'GET', path: '/', query: {} }, configuration };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return check();
}

describe('Reactor: the limits of outbound requests', () => {
  let server: Server;
  let origin: string;
  const open = new Set<Socket>();
  let reactor: Reactor;
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/hang') return; // never answers
      if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 1);
        let sent = 0;
        const pump = () => {
          while (sent < 64 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
          if (sent < 64 * 1024 * 1024) res.once('drain', pump);
          else res.end();
        };
        res.on('close', () => (sent = Infinity));
        pump();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'x-kind': 'plain', 'set-cookie': ['a=1', 'b=2'] });
      res.end(`hello ${req.method} ${req.url}`);
    });
    server.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
    origin = `http://127.0.0.1:${await listen(server)}`;
    reactor = new Reactor({ poolSize: 2, tenantMaxConcurrency: 1, timeoutMs: TIMEOUT_MS, outbound: { allowHttp: true, allowedPrivateCidrs: ['127.0.0.0/8'] } });
    await Promise.all([
      reactor.run(input('warm-a', 'module.exports = async () => ({})', {})),
      reactor.run(input('warm-b', 'module.exports = async () => ({})', {})),
    ]);
  });
  afterAll(async () => {
    await reactor.close();
    server.closeAllConnections();
    server.close();
  });

  it('refuses the 51st request of one invocation', async () => {
    const code = `module.exports = async (req) => {
      let ok = 0;
      for (let i = 0; i < 60; i++) {
        try { await (await fetch(req.configuration.origin + '/n' + i)).text(); ok++; }
        catch (e) { return { body: { ok, refused: e.cause.message } }; }
      }
      return { body: { ok } };
    };`;
    const result = await reactor.run(input('counted', code, { origin }));
    expect(okBody(result)).toEqual({ ok: 50, refused: 'a transform may make at most 50 outbound requests' });
    expect(result.outbound?.requests).toBe(50);
  });

  it('bounds a response body (8 MiB with the default heap) and the invocation goes on', async () => {
    const code = `module.exports = async (req) => {
      try { await fetch(req.configuration.origin + '/huge'); return { body: 'read it all' }; }
      catch (e) { const after = await (await fetch(req.configuration.origin + '/small')).text(); return { body: e.cause.code + ' ' + e.cause.message + ' / ' + after }; }
    };`;
    expect(okBody(await reactor.run(input('huge', code, { origin })))).toBe(
      'ERR_GATEHOUSE_BODY_TOO_LARGE The response body exceeds 8388608 bytes / hello GET /small',
    );
  });

  it('a transform holding requests open and looping ends at its deadline, its sockets closed, and another tenant runs meanwhile', async () => {
    const hog = `module.exports = async (req) => {
      for (let i = 0; i < 6; i++) fetch(req.configuration.origin + '/hang').catch(() => {});
      for (;;) { try { await fetch(req.configuration.origin + '/hang'); } catch (e) {} }
    };`;
    const started = Date.now();
    const hogging = reactor.run(input('hog', hog, { origin }));
    await until(() => open.size >= 6);
    // At most 6 connections in flight for one invocation.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(open.size).toBe(6);
    const other = await reactor.run(
      input('other', `module.exports = async (req) => ({ body: await (await fetch(req.configuration.origin + '/other')).text() })`, { origin }),
    );
    expect(okBody(other)).toBe('hello GET /other');
    const result = await hogging;
    expect(result).toMatchObject({ ok: false, status: 500, body: { proxy_error: { detail: `Transform timed out after ${TIMEOUT_MS} ms` } } });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);
    expect(await until(() => open.size === 0)).toBe(true);
  });

  it('closes the sockets of requests still pending when the transform returns', async () => {
    const code = `module.exports = async (req) => {
      for (let i = 0; i < 3; i++) fetch(req.configuration.origin + '/hang').catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { body: 'returned' };
    };`;
    const result = await reactor.run(input('leaver', code, { origin }));
    expect(okBody(result)).toBe('returned');
    expect(await until(() => open.size === 0)).toBe(true);
  });

  // The same as Node but for connection management: each outbound request has a connection of its own (no keep-alive).
  it('answers as Node does for the same server (fetch and http.request)', async () => {
    const code = `const http = require('http');
    module.exports = async (req) => {
      const url = req.configuration.origin + '/same?x=1';
      const f = await fetch(url, { method: 'POST', body: 'abc', headers: { 'x-a': '1' } });
      const fetched = { status: f.status, statusText: f.statusText, ok: f.ok, headers: [...f.headers].filter(([n]) => !['date', 'connection', 'keep-alive'].includes(n)), cookies: f.headers.getSetCookie(), text: await f.text() };
      const viaHttp = await new Promise((resolve, reject) => {
        http.request(url, { method: 'PUT', headers: { 'x-a': '1' } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () => { const { date, connection, 'keep-alive': keepAlive, ...headers } = res.headers; resolve({ status: res.statusCode, message: res.statusMessage, version: res.httpVersion, headers, text }); });
        }).on('error', reject).end('abc');
      });
      return { body: { fetched, viaHttp } };
    };`;
    const sandboxed = okBody(await reactor.run(input('same', code, { origin })));
    const url = `${origin}/same?x=1`;
    const f = await fetch(url, { method: 'POST', body: 'abc', headers: { 'x-a': '1' } });
    const fetched = {
      status: f.status,
      statusText: f.statusText,
      ok: f.ok,
      headers: [...f.headers].filter(([n]) => !['date', 'connection', 'keep-alive'].includes(n)),
      cookies: f.headers.getSetCookie(),
      text: await f.text(),
    };
    const viaHttp = await new Promise((resolve, reject) => {
      nodeRequest(url, { method: 'PUT', headers: { 'x-a': '1' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...headers } = res.headers;
          resolve({ status: res.statusCode, message: res.statusMessage, version: res.httpVersion, headers, text });
        });
      })
        .on('error', reject)
        .end('abc');
    });
    expect(sandboxed).toEqual({ fetched, viaHttp });
  });
});

describe('Reactor: mutual TLS from a transform', () => {
  let dir: string;
  let server: Server;
  let port: number;
  let reactor: Reactor;
  const pem = (name: string) => readFileSync(join(dir, name), 'utf8');
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-mtls-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=test-ca');
    for (const name of ['server', 'client']) {
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
      openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '1',
        ...(name === 'server' ? ['-extfile', '/dev/stdin'] : []),
      );
    }
    server = createTlsServer(
      { key: pem('server.key'), cert: pem('server.pem'), ca: pem('ca.pem'), requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.end(`hello ${peer.subject?.CN}`);
      },
    );
    port = await listen(server);
    reactor = new Reactor({ poolSize: 1, timeoutMs: 5000, outbound: { allowedPrivateCidrs: ['127.0.0.0/8'] } });
  });
  afterAll(async () => {
    await reactor?.close();
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const code = `const https = require('https');
  module.exports = async (req) => {
    const { url, cert, key, ca } = req.configuration;
    const agent = cert ? new https.Agent({ cert, key, ca }) : undefined;
    return new Promise((resolve) => {
      https.get(url, { agent, ca, servername: 'server' }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ body: res.statusCode + ' ' + text }));
      }).on('error', (e) => resolve({ body: 'failed ' + e.code }));
    });
  };`;

  it('presents the client certificate of an https.Agent; without one the server refuses', async () => {
    const url = `https://127.0.0.1:${port}/`;
    expect(okBody(await reactor.run(input('mtls', code, { url, cert: pem('client.pem'), key: pem('client.key'), ca: pem('ca.pem') })))).toBe(
      '200 hello client',
    );
    expect(okBody(await reactor.run(input('mtls', code, { url, ca: pem('ca.pem') })))).toMatch(/^failed (ECONNRESET|ERR_SSL|EPROTO)/);
  });
});
