import { Reactor, type SvcBridge, type TransformInput } from './index';
import { okBody } from '../test/support/reactor-results';

function input(tenantId: string, code: string, svc?: SvcBridge): TransformInput {
  return { tenantId, code, args: { body: { n: 1 }, headers: {}, method: 'GET', path: '/', query: {} }, configuration: { secret: tenantId }, svc };
}

const HOST_TRACES = ['/work/', 'node_modules', 'node:', '.ts', 'isolated-vm', 'Module._compile', 'process'];

describe('Reactor: escape attempts', () => {
  let reactor: Reactor;
  beforeAll(() => {
    reactor = new Reactor({ poolSize: 2, timeoutMs: 3000 });
  });
  afterAll(() => reactor.close());

  it("offers no host process (only the sandbox's own), no host require and no isolated-vm module, whichever way it is asked for", async () => {
    const result = await reactor.run(
      input(
        'a',
        `const attempt = (f) => { try { const v = f(); return v === undefined || v === null ? String(v) : typeof v; } catch (e) { return 'threw ' + e.name; } };
        const moduleThis = this;
        const moduleArgs = arguments;
        module.exports = async function (req) {
          return { headers: {}, body: {
            process: typeof process,
            globalProcess: typeof globalThis.process,
            constructorChain: attempt(() => moduleThis.constructor.constructor('return process')()),
            functionThis: attempt(() => Function('return this')().process),
            asyncFunctionCtor: await (async () => {}).constructor('return typeof process')(),
            // The sandbox's process (runtime/process.js): the same object every way, with nothing of the host's.
            sameProcess: process === Function('return this')().process && process === require('process'),
            hostless: [Object.keys(process.env).length, typeof process.mainModule, typeof process.dlopen, typeof process._linkedBinding,
              attempt(() => process.binding('fs')), attempt(() => process.exit(1)), process.cwd(), Object.keys(process.versions).join()],
            fs: attempt(() => require('fs')),
            nodeFs: attempt(() => require('node:fs')),
            childProcess: attempt(() => require('child_process')),
            ivm: attempt(() => require('isolated-vm')),
            net: attempt(() => require('net')),
            requireMessage: (() => { try { require('child_process'); } catch (e) { return e.message; } })(),
            globalRequire: typeof globalThis.require,
            callerOfModule: attempt(() => moduleArgs.callee.caller),
            callerOfHandler: attempt(() => arguments.callee.caller),
            dynamicImport: await import('fs').then(() => 'imported', (e) => 'rejected'),
            webAssembly: typeof WebAssembly,
            sharedMemory: typeof SharedArrayBuffer + typeof Atomics,
            loaderGone: typeof __gatehouse_load,
            globals: Object.getOwnPropertyNames(globalThis).filter((n) => !/^[A-Z]/.test(n) && globalThis[n] !== undefined).sort(),
          } };
        };`,
      ),
    );
    expect(okBody(result)).toEqual({
      process: 'object',
      globalProcess: 'object',
      constructorChain: 'object',
      functionThis: 'object',
      asyncFunctionCtor: 'object',
      sameProcess: true,
      hostless: [0, 'undefined', 'undefined', 'undefined', 'threw Error', 'threw Error', '/', 'node'],
      fs: 'threw Error',
      nodeFs: 'threw Error',
      childProcess: 'threw Error',
      ivm: 'threw Error',
      net: 'threw Error',
      requireMessage: "Cannot find module 'child_process': a transform cannot start processes or threads",
      globalRequire: 'undefined',
      callerOfModule: 'null',
      // An async function has no caller to give away: reading it throws.
      callerOfHandler: 'threw TypeError',
      dynamicImport: 'rejected',
      webAssembly: 'undefined',
      sharedMemory: 'undefinedundefined',
      loaderGone: 'undefined',
      globals: [
        'atob',
        'btoa',
        'clearImmediate',
        'clearInterval',
        'clearTimeout',
        'console',
        'crypto',
        'decodeURI',
        'decodeURIComponent',
        'encodeURI',
        'encodeURIComponent',
        'escape',
        'eval',
        'fetch',
        'global',
        'globalThis',
        'isFinite',
        'isNaN',
        'parseFloat',
        'parseInt',
        'process',
        'queueMicrotask',
        'setImmediate',
        'setInterval',
        'setTimeout',
        'structuredClone',
        'unescape',
      ],
    });
  });

  it('keeps host objects out of svc answers and svc errors', async () => {
    class HostThing {
      secret = 'host';
      method() {
        return process;
      }
    }
    const bridge: SvcBridge = {
      async request(req) {
        if (req.path === '/fail') return { status: 500, body: { thing: new HostThing() } };
        return { status: 200, body: { fn: () => process, thing: new HostThing(), date: new Date(0), proc: process.versions } };
      },
    };
    const result = await reactor.run(
      input(
        'a',
        `module.exports = async ({ svc }) => {
          const ok = await svc.request({ method: 'GET', path: '/ok' });
          let failure;
          try { await svc.request({ method: 'GET', path: '/fail' }); } catch (e) { failure = e; }
          return { headers: {}, body: {
            keys: Object.keys(ok).sort(), fn: typeof ok.fn, thing: ok.thing, method: typeof ok.thing.method, date: ok.date,
            protoIsPlain: Object.getPrototypeOf(ok.thing) === Object.prototype,
            errorBody: failure.body, errorStack: failure.stack,
          } };
        };`,
        bridge,
      ),
    );
    const body = okBody(result);
    expect(body).toMatchObject({
      keys: ['date', 'proc', 'thing'],
      fn: 'undefined',
      thing: { secret: 'host' },
      method: 'undefined',
      date: '1970-01-01T00:00:00.000Z',
      protoIsPlain: true,
      errorBody: { thing: { secret: 'host' } },
    });
    for (const trace of HOST_TRACES) expect(body.errorStack).not.toContain(trace);
  });

  it('shows only sandbox frames to Error.prepareStackTrace, even for errors raised by the runtime or the host', async () => {
    const result = await reactor.run(
      input(
        'a',
        `module.exports = async () => {
          const seen = [];
          Error.prepareStackTrace = (error, frames) => {
            for (const f of frames) {
              const fn = f.getFunction();
              seen.push({ file: String(f.getFileName()), fn: fn === undefined ? 'hidden' : String(fn).slice(0, 60), self: typeof f.getThis() });
            }
            return 'prepared';
          };
          const stacks = [];
          const probes = [
            () => new URL('not a url'),
            () => require('crypto').createHash('nope'),
            () => require('crypto').createHmac('sha256', {}),
            () => Buffer.from(Symbol('x')),
            () => require('crypto').randomBytes(-1),
            () => new TextDecoder('klingon'),
            () => atob('*'),
            () => setTimeout('code'),
          ];
          for (const probe of probes) { try { probe(); stacks.push('no error'); } catch (e) { stacks.push(e.stack); } }
          Error.prepareStackTrace = undefined;
          return { headers: {}, body: { seen, stacks } };
        };`,
      ),
    );
    const { seen, stacks } = okBody(result);
    expect(stacks).toEqual(Array(8).fill('prepared'));
    expect(seen.length).toBeGreaterThan(0);
    for (const frame of seen) {
      expect(['transform.js', 'gatehouse:runtime', 'undefined', 'null']).toContain(frame.file);
      // Runtime frames are strict: neither their function nor their receiver is handed out.
      if (frame.file === 'gatehouse:runtime') expect(frame).toMatchObject({ fn: 'hidden', self: 'undefined' });
      expect(frame.fn).not.toContain('[native code]');
    }
  });

  it('never puts a host path or stack into error results', async () => {
    const results = await Promise.all([
      reactor.run(input('a', `module.exports = async () => { new URL('::'); };`)),
      reactor.run(input('a', `module.exports = async () => { require('crypto').createHash('sha256').update({}); };`)),
      reactor.run(input('a', `module.exports = async () => { function f() { return f(); } f(); };`)),
      reactor.run(input('a', `module.exports = async () => { throw Object.assign(new Error('with stack'), { stack: 'x' }); };`)),
    ]);
    for (const result of results) {
      expect(result.ok).toBe(false);
      for (const trace of HOST_TRACES) expect(JSON.stringify(result.body)).not.toContain(trace);
    }
  });
});

describe('Reactor: isolation between invocations', () => {
  let reactor: Reactor;
  beforeAll(() => {
    // A single isolate, so every invocation below shares it.
    reactor = new Reactor({ poolSize: 1, timeoutMs: 3000 });
  });
  afterAll(() => reactor.close());

  const polluter = `module.exports = async () => {
    Object.prototype.polluted = 1;
    Array.prototype.push = function () { throw new Error('hijacked push'); };
    JSON.stringify = () => '"hijacked"';
    String.prototype.toUpperCase = () => 'hijacked';
    Promise.prototype.then = function () { throw new Error('hijacked then'); };
    globalThis.x = 1;
    globalThis.leaked = { secret: 'from A' };
    Buffer.from = () => 'hijacked';
    console.log = () => {};
    require('crypto').createHash = () => null;
    return { body: 'done', headers: {} };
  };`;

  const observer = `module.exports = async (req) => {
    const list = [];
    list.push('push works');
    return { headers: {}, body: {
      polluted: ({}).polluted, x: typeof x, leaked: typeof leaked, list, json: JSON.stringify({ a: 1 }),
      upper: 'abc'.toUpperCase(), buffer: Buffer.from('hi').toString('hex'),
      hash: require('crypto').createHash('sha1').update('').digest('hex').slice(0, 8),
      then: await Promise.resolve('then works'), secret: req.configuration.secret,
    } };
  };`;

  const clean = {
    polluted: undefined,
    x: 'undefined',
    leaked: 'undefined',
    list: ['push works'],
    json: '{"a":1}',
    upper: 'ABC',
    buffer: '6869',
    hash: 'da39a3ee',
    then: 'then works',
  };

  it("does not let one tenant's prototype pollution and globals reach the next tenant", async () => {
    expect(okBody(await reactor.run(input('tenant-a', polluter)))).toBe('done');
    expect(okBody(await reactor.run(input('tenant-b', observer)))).toEqual({ ...clean, secret: 'tenant-b' });
  });

  it("carries state only between invocations of the same tenant's same code (its warm context)", async () => {
    const counter = `let count = 0; module.exports = async () => { globalThis.calls = (globalThis.calls || 0) + 1; return { body: [++count, calls], headers: {} }; };`;
    // Intended: the same tenant's same code runs again in its warm context, module scope and globals included.
    expect(okBody(await reactor.run(input('tenant-a', counter)))).toEqual([1, 1]);
    expect(okBody(await reactor.run(input('tenant-a', counter)))).toEqual([2, 2]);
    // The same code of another tenant starts from a fresh context; so does other code of the same tenant.
    expect(okBody(await reactor.run(input('tenant-b', counter)))).toEqual([1, 1]);
    expect(okBody(await reactor.run(input('tenant-a', polluter)))).toBe('done');
    expect(okBody(await reactor.run(input('tenant-a', observer)))).toEqual({ ...clean, secret: 'tenant-a' });
  });

  it('never runs a finished transform again: late timers and svc answers are dropped', async () => {
    let answer: () => void = () => undefined;
    const slow: SvcBridge = {
      request: () => new Promise((resolve) => (answer = () => resolve({ status: 200, body: {} }))),
    };
    const leaver = `module.exports = async ({ svc }) => {
      setTimeout(() => { while (true) {} }, 20);
      svc.request({ method: 'GET', path: '/later' }).then(() => { while (true) {} });
      return { body: 'left work behind', headers: {} };
    };`;
    expect(okBody(await reactor.run(input('tenant-a', leaver, slow)))).toBe('left work behind');
    answer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(okBody(await reactor.run(input('tenant-b', observer)))).toEqual({ ...clean, secret: 'tenant-b' });
    expect(reactor.stats().replaced).toBe(0);
  });
});
