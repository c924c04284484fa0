import type { LookupAddress } from 'node:dns';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { createDestinationAgent, DestinationRefusedError, guardedLookup, LookupFunction } from '../../src/proxy-invocation/destination-agent';
import { IpDestinationPolicy } from '../../src/proxy-invocation/destination-policy';

// Apps with their sandbox pools start per file, and some tests run transforms to the reactor's limits.
jest.setTimeout(30_000);

/** A stub resolver: answers every name with `addresses` and remembers what it was asked. */
function stubResolver(addresses: LookupAddress[]): LookupFunction & { asked: string[] } {
  const asked: string[] = [];
  const resolve = ((hostname, _options, callback) => {
    asked.push(hostname);
    process.nextTick(() => callback(null, addresses));
  }) as LookupFunction & { asked: string[] };
  resolve.asked = asked;
  return resolve;
}

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

/** What a guarded lookup answers; resolving only, it never connects anywhere. */
function lookupThrough(policy: IpDestinationPolicy, addresses: LookupAddress[], all = true): Promise<{ error: unknown; result: unknown }> {
  return new Promise((resolve) => {
    guardedLookup(policy, stubResolver(addresses))('destination.example', { all } as never, (error, address, family) =>
      resolve({ error, result: all ? address : { address, family } }),
    );
  });
}

/** A destination that answers 'reached' and counts the connections it accepts. */
const countingServer = () => startUpstream((_req, res) => res.end('reached'));

describe('SSRF: destinations are checked at connect time, after resolution', () => {
  describe('the guarded lookup', () => {
    const strict = new IpDestinationPolicy(false, []);

    it.each([
      ['loopback', [v4('127.0.0.1')]],
      ['loopback elsewhere in 127/8', [v4('127.1.2.3')]],
      ['IPv6 loopback', [v6('::1')]],
      ['IPv4-mapped loopback', [v6('::ffff:127.0.0.1')]],
      ['IPv4-mapped private', [v6('::ffff:10.0.0.1')]],
      ['10/8', [v4('10.0.0.1')]],
      ['172.16/12', [v4('172.31.255.254')]],
      ['192.168/16', [v4('192.168.1.1')]],
      ['link-local (cloud metadata)', [v4('169.254.169.254')]],
      ['IPv6 link-local', [v6('fe80::1')]],
      ['unique-local', [v6('fd12:3456::1')]],
      ['CGNAT', [v4('100.64.0.1')]],
      ['unspecified', [v4('0.0.0.0')]],
      ['IPv6 unspecified', [v6('::')]],
      ['multicast', [v4('224.0.0.1')]],
      ['IPv6 multicast', [v6('ff02::1')]],
      ['broadcast', [v4('255.255.255.255')]],
      ['reserved (documentation)', [v4('192.0.2.10')]],
      ['reserved (240/4)', [v4('240.0.0.1')]],
      ['NAT64 of a private address', [v6('64:ff9b::a00:1')]],
      ['6to4', [v6('2002:a00:1::1')]],
      ['a public address beside a private one', [v4('93.184.215.14'), v4('10.0.0.1')]],
      ['a public IPv6 address beside loopback', [v6('2606:4700::1111'), v6('::1')]],
    ])('refuses %s', async (_name, addresses) => {
      const { error } = await lookupThrough(strict, addresses);
      expect(error).toBeInstanceOf(DestinationRefusedError);
      // The detail never names the resolved address.
      for (const a of addresses) expect((error as Error).message).not.toContain(a.address);
    });

    it('passes public addresses on, in the form net.connect asked for', async () => {
      expect(await lookupThrough(strict, [v4('93.184.215.14'), v6('2606:4700::1111')])).toEqual({
        error: null,
        result: [v4('93.184.215.14'), v6('2606:4700::1111')],
      });
      expect(await lookupThrough(strict, [v4('93.184.215.14')], false)).toEqual({ error: null, result: { address: '93.184.215.14', family: 4 } });
    });

    it('admits exactly the ranges PROXY_ALLOWED_PRIVATE_CIDRS names', async () => {
      const policy = new IpDestinationPolicy(false, ['10.1.0.0/16', '::1/128']);
      expect((await lookupThrough(policy, [v4('10.1.2.3')])).error).toBeNull();
      expect((await lookupThrough(policy, [v6('::1')])).error).toBeNull();
      expect((await lookupThrough(policy, [v4('10.2.0.1')])).error).toBeInstanceOf(DestinationRefusedError);
      expect((await lookupThrough(policy, [v4('127.0.0.1')])).error).toBeInstanceOf(DestinationRefusedError);
      const mapped = new IpDestinationPolicy(false, ['127.0.0.0/8']);
      expect((await lookupThrough(mapped, [v6('::ffff:127.0.0.1')])).error).toBeNull();
    });

    it('reports resolution failures as they are', async () => {
      const failing: LookupFunction = (_h, _o, callback) => callback(Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }), []);
      const error = await new Promise((resolve) => guardedLookup(strict, failing)('x', { all: true }, (e) => resolve(e)));
      expect(error).toMatchObject({ code: 'ENOTFOUND' });
    });
  });

  describe('the destination dispatcher (loopback only)', () => {
    let upstream: Upstream;
    beforeAll(async () => (upstream = await countingServer()));
    afterAll(() => upstream?.stop());

    it('refuses a name resolving to a refused address before any connection', async () => {
      const resolve = stubResolver([v4('127.0.0.1')]);
      const agent = createDestinationAgent({ policy: new IpDestinationPolicy(true, []), connectTimeoutMs: 1000, lookup: resolve });
      try {
        const before = upstream.connections();
        const error = await agent.request({ origin: `http://rebinding.example:${upstream.port}`, path: '/', method: 'GET' }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DestinationRefusedError);
        expect(resolve.asked).toEqual(['rebinding.example']);
        expect(upstream.connections()).toBe(before);
      } finally {
        await agent.close();
      }
    });

    it('connects to exactly the checked address when the range is allowed', async () => {
      const resolve = stubResolver([v4('127.0.0.1')]);
      const agent = createDestinationAgent({ policy: new IpDestinationPolicy(true, ['127.0.0.0/8']), connectTimeoutMs: 1000, lookup: resolve });
      try {
        const res = await agent.request({ origin: `http://allowed.example:${upstream.port}`, path: '/', method: 'GET' });
        expect(await res.body.text()).toBe('reached');
      } finally {
        await agent.close();
      }
    });

    it('refuses literal addresses (which skip DNS) before connecting, IPv4-mapped included', async () => {
      const resolve = stubResolver([]);
      const agent = createDestinationAgent({ policy: new IpDestinationPolicy(true, []), connectTimeoutMs: 1000, lookup: resolve });
      try {
        const before = upstream.connections();
        for (const origin of [`http://127.0.0.1:${upstream.port}`, `http://[::ffff:127.0.0.1]:${upstream.port}`]) {
          const error = await agent.request({ origin, path: '/', method: 'GET' }).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(DestinationRefusedError);
        }
        expect(upstream.connections()).toBe(before);
        expect(resolve.asked).toEqual([]);
      } finally {
        await agent.close();
      }
    });
  });

  describe('end to end through /proxy', () => {
    let strict: TestApp;
    let permissive: TestApp;
    let upstream: Upstream;

    beforeAll(async () => {
      upstream = await countingServer();
      [strict, permissive] = await Promise.all([
        startTestApp({ PROXY_ALLOW_HTTP: 'true', REACTOR_POOL_SIZE: '1' }),
        startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8,::1/128', REACTOR_POOL_SIZE: '1' }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([strict?.close(), permissive?.close()]);
      await upstream?.stop();
    });

    async function proxyOn(app: TestApp, destination: string): Promise<string> {
      const { key } = await app.tenant();
      const res = await app.http().post('/proxies').set('svc-api-key', key).send({ name: 'p', destination_url: destination, require_auth: false });
      expect(res.status).toBe(201);
      return res.body.key;
    }

    it('a name that resolves to loopback is refused with a 502, without a connection', async () => {
      const key = await proxyOn(strict, `http://localhost:${upstream.port}/`);
      const before = upstream.connections();
      const res = await strict.http().get('/proxy/x').set('svc-proxy-key', key).expect(502);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.detail).toMatch(/non-public address/);
      expect(res.headers['svc-proxy-destination-status']).toBeUndefined();
      expect(upstream.connections()).toBe(before);
    });

    it('the same name is reached where the operator allows loopback', async () => {
      const key = await proxyOn(permissive, `http://localhost:${upstream.port}/`);
      const res = await permissive.http().get('/proxy/x').set('svc-proxy-key', key).expect(200);
      expect(res.text).toBe('reached');
    });

    it('a literal address saved under a looser policy is still refused at connect time', async () => {
      // Both apps share the database: the proxy was created where 127.0.0.0/8 was allowed.
      const key = await proxyOn(permissive, `http://127.0.0.1:${upstream.port}/`);
      const before = upstream.connections();
      await strict.http().get('/proxy/x').set('svc-proxy-key', key).expect(502);
      expect(upstream.connections()).toBe(before);
      await permissive.http().get('/proxy/x').set('svc-proxy-key', key).expect(200);
    });
  });
});
