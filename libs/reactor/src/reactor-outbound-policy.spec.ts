import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Reactor, type TransformInput, type TransformResult } from './index';
import { okBody } from '../test/support/reactor-results';

/**
 * Transforms' own requests follow the proxies' destination policy: checked on the address connected to (names
 * resolved then, literals before), http:// only where allowed, redirects only to allowed addresses and at most 5.
 * The server below counts connections: a refused request never reaches it.
 */
function input(code: string, configuration: Record<string, string>): TransformInput {
  return { tenantId: 'policy', code, args: { body: null, headers: {}, method: 'GET', path: '/', query: {} }, configuration };
}

/** The transform's outcome for `fetch(url)`, or for http.get(url) with `viaHttp`: 'ok <status>' or the error's code and message. */
const probe = `module.exports = async (req) => {
  const { url, via } = req.configuration;
  try {
    if (via === 'http') {
      const status = await new Promise((resolve, reject) => {
        const mod = require(url.startsWith('https') ? 'https' : 'http');
        mod.get(url, (res) => { res.resume(); resolve(res.statusCode); }).on('error', reject);
      });
      return { body: 'ok ' + status };
    }
    const res = await fetch(url, { redirect: via === 'manual' ? 'manual' : 'follow' });
    return { body: 'ok ' + res.status };
  } catch (e) {
    const cause = e.cause || e;
    return { body: 'failed ' + (cause.code || '') + ': ' + cause.message };
  }
};`;

describe('Reactor: outbound requests under the destination policy', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  let strict: Reactor;
  let loopbackOnly: Reactor;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
      if (hop) {
        const n = Number(hop[1]);
        res.writeHead(302, { location: n > 1 ? `/hop/${n - 1}` : '/end' });
        res.end();
        return;
      }
      if (req.url?.startsWith('/to/')) {
        res.writeHead(302, { location: decodeURIComponent(req.url.slice(4)) });
        res.end();
        return;
      }
      res.end('reached');
    });
    server.on('connection', (_socket: Socket) => connections++);
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
    strict = new Reactor({ poolSize: 1, outbound: { allowHttp: true } });
    // Only 127.0.0.1 is allowed; `rebind.test` answers 127.0.0.1, then 127.0.0.2, in turn.
    loopbackOnly = new Reactor({
      poolSize: 1,
      outbound: { allowHttp: true, allowedPrivateCidrs: ['127.0.0.1/32'], hosts: { 'rebind.test': ['127.0.0.1', '127.0.0.2'] } },
    });
  });
  afterAll(async () => {
    await Promise.all([strict.close(), loopbackOnly.close()]);
    server.close();
  });

  const run = async (reactor: Reactor, url: string, via = 'fetch'): Promise<string> => okBody(await reactor.run(input(probe, { url, via }))) as string;

  it.each([
    ['a loopback literal', (p: number) => `http://127.0.0.1:${p}/`],
    ['an IPv4-mapped loopback', (p: number) => `http://[::ffff:127.0.0.1]:${p}/`],
    ['a name resolving to loopback', (p: number) => `http://localhost:${p}/`],
    ['a private literal', (p: number) => `http://10.0.0.1:${p}/`],
    ['the link-local metadata address', (p: number) => `http://169.254.169.254:${p}/`],
    ['a hex-encoded loopback', (p: number) => `http://0x7f000001:${p}/`],
  ])('refuses %s through fetch and http.get, without connecting', async (_name, url) => {
    const before = connections;
    expect(await run(strict, url(port))).toMatch(/^failed GATEHOUSE_DESTINATION_REFUSED: .*non-public address/);
    expect(await run(strict, url(port), 'http')).toMatch(/^failed GATEHOUSE_DESTINATION_REFUSED/);
    expect(connections).toBe(before);
  });

  it('checks the address at connect time: a name that rebinds to a refused address is refused on that lookup', async () => {
    expect(await run(loopbackOnly, `http://rebind.test:${port}/`)).toBe('ok 200');
    const before = connections;
    expect(await run(loopbackOnly, `http://rebind.test:${port}/`)).toMatch(/^failed GATEHOUSE_DESTINATION_REFUSED/);
    expect(connections).toBe(before);
  });

  it('follows a redirect only to an allowed address', async () => {
    const before = connections;
    const target = encodeURIComponent(`http://127.0.0.2:${port}/`);
    expect(await run(loopbackOnly, `http://127.0.0.1:${port}/to/${target}`)).toMatch(/^failed GATEHOUSE_DESTINATION_REFUSED/);
    expect(connections).toBe(before + 1);
    // Not followed (manual): the 302 itself.
    expect(await run(loopbackOnly, `http://127.0.0.1:${port}/to/${target}`, 'manual')).toBe('ok 302');
  });

  it('follows at most 5 redirects', async () => {
    expect(await run(loopbackOnly, `http://127.0.0.1:${port}/hop/5`)).toBe('ok 200');
    expect(await run(loopbackOnly, `http://127.0.0.1:${port}/hop/6`)).toMatch(/^failed ERR_TOO_MANY_REDIRECTS: Too many redirects/);
  });

  it('counts redirects a package follows itself over http.request (node-fetch, axios) the same way', async () => {
    const code = `const http = require('http');
    const get = (url) => new Promise((resolve, reject) => http.get(url, (res) => { res.resume(); resolve(res); }).on('error', reject));
    module.exports = async (req) => {
      let url = req.configuration.url;
      for (let i = 0; i < 10; i++) {
        try {
          const res = await get(url);
          if (res.statusCode !== 302) return { body: 'done after ' + i };
          url = new URL(res.headers.location, url).href;
        } catch (e) { return { body: 'refused after ' + i + ': ' + e.code }; }
      }
    };`;
    expect(okBody(await loopbackOnly.run(input(code, { url: `http://127.0.0.1:${port}/hop/8` })))).toBe('refused after 6: ERR_TOO_MANY_REDIRECTS');
  });

  it('refuses http:// unless allowed', async () => {
    const httpsOnly = new Reactor({ poolSize: 1, outbound: { allowedPrivateCidrs: ['127.0.0.0/8'] } });
    try {
      const before = connections;
      const result: TransformResult = await httpsOnly.run(input(probe, { url: `http://127.0.0.1:${port}/`, via: 'fetch' }));
      expect(okBody(result)).toMatch(/^failed ERR_GATEHOUSE_HTTP_REFUSED: Plain http:\/\/ requests are not allowed/);
      expect(okBody(await httpsOnly.run(input(probe, { url: `http://127.0.0.1:${port}/`, via: 'http' })))).toMatch(/^failed ERR_GATEHOUSE_HTTP_REFUSED/);
      expect(connections).toBe(before);
    } finally {
      await httpsOnly.close();
    }
  });
});
