import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Reactor, type TransformInput } from './index';
import { okBody } from '../test/support/reactor-results';

function input(code: string, configuration: Record<string, string> = {}): TransformInput {
  return { tenantId: 'outbound', code, args: { body: null, headers: {}, method: 'GET', path: '/', query: {} }, configuration };
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('Reactor: outbound HTTP from transforms', () => {
  let reactor: Reactor;
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    ({ server, origin } = await listen((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        if (req.url === '/gzip') {
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          res.end(gzipSync(JSON.stringify({ zipped: true })));
          return;
        }
        if (req.url?.startsWith('/redirect/')) {
          const n = Number(req.url.slice('/redirect/'.length));
          res.writeHead(302, { location: n > 0 ? `/redirect/${n - 1}` : '/echo' });
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-seen': req.headers['x-test'] ?? '' });
        res.end(JSON.stringify({ method: req.method, url: req.url, body }));
      });
    }));
    reactor = new Reactor({ poolSize: 1, timeoutMs: 5000, outbound: { allowHttp: true, allowedPrivateCidrs: ['127.0.0.0/8'] } });
  });
  afterAll(async () => {
    await reactor.close();
    server.close();
  });

  it('fetch: method, headers, body, json', async () => {
    const code = `module.exports = async (req) => {
      const res = await fetch(req.configuration.origin + '/echo?x=1', { method: 'POST', headers: { 'X-Test': 'yes' }, body: JSON.stringify({ a: 1 }) });
      return { body: { status: res.status, ok: res.ok, seen: res.headers.get('x-seen'), json: await res.json() } };
    };`;
    const result = await reactor.run(input(code, { origin }));
    expect(okBody(result)).toEqual({ status: 200, ok: true, seen: 'yes', json: { method: 'POST', url: '/echo?x=1', body: '{"a":1}' } });
    expect(result.outbound).toEqual({ requests: 1, ms: expect.any(Number) });
  });

  it('fetch: gzip decoded, redirects followed', async () => {
    const code = `module.exports = async (req) => {
      const z = await (await fetch(req.configuration.origin + '/gzip')).json();
      const r = await fetch(req.configuration.origin + '/redirect/3');
      return { body: { z, redirected: r.redirected, url: r.url, json: await r.json() } };
    };`;
    expect(okBody(await reactor.run(input(code, { origin })))).toEqual({
      z: { zipped: true },
      redirected: true,
      url: `${origin}/echo`,
      json: { method: 'GET', url: '/echo', body: '' },
    });
  });

  it('http.request', async () => {
    const code = `const http = require('http');
    module.exports = (req) => new Promise((resolve, reject) => {
      const r = http.request(req.configuration.origin + '/echo', { method: 'PUT', headers: { 'x-test': 'h' } }, (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => data += c);
        res.on('end', () => resolve({ body: { status: res.statusCode, seen: res.headers['x-seen'], data: JSON.parse(data) } }));
      });
      r.on('error', reject);
      r.write('part1-');
      r.end('part2');
    });`;
    expect(okBody(await reactor.run(input(code, { origin })))).toEqual({ status: 200, seen: 'h', data: { method: 'PUT', url: '/echo', body: 'part1-part2' } });
  });

  it('node-fetch 2 and axios run over them', async () => {
    const code = `const fetch = require('node-fetch');
    const axios = require('axios');
    module.exports = async (req) => {
      const o = req.configuration.origin;
      const nf = await fetch(o + '/echo', { method: 'POST', body: 'nf', headers: { 'X-Test': 'nf' } });
      const nfJson = await nf.json();
      const z = await (await fetch(o + '/gzip')).json();
      const redirected = await fetch(o + '/redirect/2');
      const ax = await axios.post(o + '/echo', { a: 1 }, { headers: { 'X-Test': 'ax' } });
      const axZ = await axios.get(o + '/gzip');
      const axR = await axios.get(o + '/redirect/2');
      return { body: { nf: [nf.status, nf.headers.get('x-seen'), nfJson], z, nfRedirect: [redirected.status, redirected.url],
        ax: [ax.status, ax.headers['x-seen'], ax.data], axZ: axZ.data, axR: axR.data } };
    };`;
    expect(okBody(await reactor.run(input(code, { origin })))).toEqual({
      nf: [200, 'nf', { method: 'POST', url: '/echo', body: 'nf' }],
      z: { zipped: true },
      nfRedirect: [200, `${origin}/echo`],
      ax: [200, 'ax', { method: 'POST', url: '/echo', body: '{"a":1}' }],
      axZ: { zipped: true },
      axR: { method: 'GET', url: '/echo', body: '' },
    });
  });
});
