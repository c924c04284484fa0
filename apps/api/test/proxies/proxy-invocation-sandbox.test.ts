import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';

// Apps with their sandbox pools start per file, and some tests run transforms to the reactor's limits.
jest.setTimeout(30_000);

/**
 * Tenant code is hostile until proven otherwise: escape attempts and resource attacks, end to end through
 * /proxy, must each end in the contract's 500 ReactorRuntimeError, while other tenants keep being served.
 */

describe('transform sandbox through /proxy', () => {
  let t: TestApp;
  let upstream: Upstream;
  let destination: string;

  beforeAll(async () => {
    upstream = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
    destination = upstream.origin;
    t = await startTestApp({
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      REACTOR_TIMEOUT_MS: '1000',
      REACTOR_POOL_SIZE: '2',
      REACTOR_MEMORY_MB: '64',
    });
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
  });

  async function proxyWith(requestTransform: string): Promise<string> {
    const { key } = await t.tenant();
    const res = await t
      .http()
      .post('/proxies')
      .set('svc-api-key', key)
      .send({ name: 'sandbox', destination_url: destination, require_auth: false, request_transform: { code: requestTransform } });
    expect(res.status).toBe(201);
    return res.body.key;
  }

  const invoke = (proxyKey: string) => t.http().post('/proxy/x').set('svc-proxy-key', proxyKey).send({ n: 1 });

  function expectRuntimeError(res: { status: number; body: any }, detail?: RegExp): void {
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ proxy_error: expect.objectContaining({ title: 'ReactorRuntimeError', status: 500 }) });
    if (detail) expect(res.body.proxy_error.detail).toMatch(detail);
    // Never a host stack or host path.
    expect(JSON.stringify(res.body)).not.toMatch(/node_modules|\/work\/|at .*\.js:\d+/);
  }

  /**
   * The bystander's proxy answers 200 five times while the attack (a call that times out) is still running
   * (no timing is asserted; the order of completion is).
   */
  async function expectServedDuringAttack(attackCall: PromiseLike<{ status: number; body: any }>, bystander: string): Promise<void> {
    let attackDone = false;
    const attack = Promise.resolve(attackCall).then((res) => {
      attackDone = true;
      return res;
    });
    // Let the attack reach its isolate.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const served: number[] = [];
    for (let i = 0; i < 5; i++) served.push((await invoke(bystander)).status);
    const servedDuringAttack = !attackDone;
    expect(served).toEqual([200, 200, 200, 200, 200]);
    expect(servedDuringAttack).toBe(true);
    expectRuntimeError(await attack, /timed out|time/i);
  }

  describe('escape attempts fail', () => {
    // Transforms get a process of the sandbox's own (env empty, version, hrtime, nextTick): whichever way it is reached,
    // it is that one, with nothing of the host's (no pid, no binding, no module, no env).
    it.each([
      ['the Function constructor reaching for process', "this.constructor.constructor('return process')()"],
      ['the constructor of an argument', "req.constructor.constructor('return process')()"],
      ['process', 'process'],
      ['globalThis.process', 'globalThis.process'],
    ])("%s reaches only the sandbox's own process", async (_name, reach) => {
      const key = await proxyWith(`module.exports = async function (req) {
        const p = ${reach};
        const attempt = (f) => { try { f(); return 'ran'; } catch (e) { return 'threw'; } };
        throw new CustomHttpResponseError({ status: 200, body: {
          same: p === require('process'), env: Object.keys(p.env), pid: typeof p.pid, mainModule: typeof p.mainModule, dlopen: typeof p.dlopen,
          binding: attempt(() => p.binding('fs')), exit: attempt(() => p.exit(1)), node: typeof p.versions.node } });
      };`);
      const res = await invoke(key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        same: true,
        env: [],
        pid: 'undefined',
        mainModule: 'undefined',
        dlopen: 'undefined',
        binding: 'threw',
        exit: 'threw',
        node: 'string',
      });
    });

    it.each([
      ['require of fs', "const fs = require('fs'); return { body: fs.readFileSync('/etc/passwd', 'utf8'), headers: {} };"],
      ['require of child_process', "require('child_process').execSync('id'); return { body: {}, headers: {} };"],
      ['import()', "const fs = await import('fs'); return { body: fs.readFileSync('/etc/passwd', 'utf8'), headers: {} };"],
      ['fetch', "const r = await fetch('http://127.0.0.1/'); return { body: await r.text(), headers: {} };"],
    ])('%s', async (_name, body) => {
      const key = await proxyWith(`module.exports = async function (req) { ${body} };`);
      expectRuntimeError(await invoke(key));
    });

    it('prototype pollution does not carry over to the next invocation, in any isolate, nor to the host', async () => {
      const polluter = await proxyWith(`module.exports = async function (req) {
        Object.prototype.polluted = 'yes';
        Array.prototype.map = function () { return ['hijacked']; };
        JSON.stringify = () => '"hijacked"';
        globalThis.leftover = 'still here';
        return { body: req.args.body, headers: req.args.headers };
      };`);
      const probe = await proxyWith(`module.exports = async function (req) {
        return { body: { polluted: ({}).polluted ?? null, map: [1, 2].map((x) => x * 2), json: JSON.stringify({ a: 1 }), leftover: typeof globalThis.leftover }, headers: { 'content-type': 'application/json' } };
      };`);
      // Enough rounds to land on both sandbox processes of the pool.
      for (let i = 0; i < 4; i++) await invoke(polluter).expect(200);
      const seen: string[] = [];
      const server = upstream.server;
      const record = (req: import('node:http').IncomingMessage) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => seen.push(Buffer.concat(chunks).toString()));
      };
      server.on('request', record);
      try {
        for (let i = 0; i < 4; i++) await invoke(probe).expect(200);
      } finally {
        server.off('request', record);
      }
      expect(seen).toHaveLength(4);
      for (const body of seen) expect(JSON.parse(body)).toEqual({ polluted: null, map: [2, 4], json: '{"a":1}', leftover: 'undefined' });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('resource attacks end in a ReactorRuntimeError within the limits', () => {
    it.each([
      ['an infinite loop', 'while (true) {}', /timed out|time/i],
      ['an infinite loop after an await', 'await null; await new Promise((r) => setTimeout(r, 1)); while (true) {}', /timed out|time/i],
      ['a promise that never settles', 'await new Promise(() => {});', /timed out|time/i],
      // Filling a 64 MiB heap takes a loaded machine more than the 1 s timeout at times: either limit ends it.
      ['a memory bomb', 'const hoard = []; while (true) hoard.push(new Array(1e6).fill(Math.random()));', /memory|heap|allocation|timed out/i],
      ['deep recursion', 'const dive = (n) => dive(n + 1) + 1; dive(0);', /call stack|recursion/i],
      ['a huge return value', "return { body: 'x'.repeat(40 * 1024 * 1024), headers: {} };", undefined],
    ])('%s', async (_name, attack, detail) => {
      const key = await proxyWith(`module.exports = async function (req) { ${attack} };`);
      expectRuntimeError(await invoke(key), detail);
    });

    it("another tenant's proxy keeps answering during an attack", async () => {
      const attacker = await proxyWith('module.exports = async function () { await null; while (true) {} };');
      const bystander = await proxyWith('module.exports = async (req) => ({ body: { ...req.args.body, fine: true }, headers: req.args.headers });');
      await invoke(bystander).expect(200);

      await expectServedDuringAttack(invoke(attacker), bystander);
      // The pool recovered: both tenants are served afterwards.
      await invoke(bystander).expect(200);
    });

    it('a transform that turns abusive after many cheap calls (run on the service thread) is stopped, and the others keep answering', async () => {
      const attacker = await proxyWith(
        'module.exports = async (req) => { if (req.args.body.attack) { for (;;) {} } return { body: req.args.body, headers: req.args.headers }; };',
      );
      const bystander = await proxyWith('module.exports = async (req) => ({ body: { ...req.args.body, fine: true }, headers: req.args.headers });');
      // Cheap calls: warm, then synchronous on the service's thread.
      for (let i = 0; i < 10; i++) await invoke(attacker).expect(200);
      await invoke(bystander).expect(200);

      await expectServedDuringAttack(t.http().post('/proxy/x').set('svc-proxy-key', attacker).send({ attack: true }), bystander);
      // The attacker's own cheap calls still work, from a fresh context.
      await invoke(attacker).expect(200);
    });
  });
});
