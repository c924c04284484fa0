import { Reactor, type TransformInput, type TransformResult } from './index';
import { okBody } from '../test/support/reactor-results';
import { bundledModules } from './sandbox-modules';
import { ensureSandboxModules } from '../test/support/sandbox-modules';

const TIMEOUT_MS = 3000;

function input(tenantId: string, code: string): TransformInput {
  return { tenantId, code, args: { body: null, headers: {} }, configuration: {} };
}
const echo = `module.exports = async () => ({ body: 'alive' });`;

function detail(result: TransformResult): string {
  return (result.body as { proxy_error?: { detail?: string } }).proxy_error?.detail ?? JSON.stringify(result.body);
}

/** The module layer within the sandbox's limits: what packages and native calls cost is bounded like anything else. */
describe('Reactor: modules within the limits', () => {
  let reactor: Reactor;
  beforeAll(async () => {
    ensureSandboxModules();
    reactor = new Reactor({ poolSize: 1, timeoutMs: TIMEOUT_MS });
    await reactor.run(input('warm', echo));
  });
  afterAll(() => reactor.close());

  it('a transform that requires every module in a loop ends within its memory and time limits, and the next runs', async () => {
    const names = Object.keys(bundledModules());
    expect(names.length).toBeGreaterThan(25);
    const started = Date.now();
    const result = await reactor.run(
      input(
        'greedy',
        `module.exports = async () => { const kept = []; for (let i = 0; i < 1000; i++) for (const n of ${JSON.stringify(names)}) kept.push(require(n)); return { body: kept.length }; };`,
      ),
    );
    // Either all of it fits (each module loads once per context: later requires are the same object), or the run is
    // ended by its memory limit; never more than its deadline.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);
    if (result.ok) expect(result.body).toBe(1000 * names.length);
    else expect(detail(result)).toMatch(/memory limit|timed out/);
    expect(okBody(await reactor.run(input('next', echo)))).toBe('alive');
  });

  it.each([
    ['scrypt with a huge cost', `require('crypto').scryptSync('pw', 'salt', 64, { N: 2 ** 24, r: 8 })`, /scrypt parameters exceed/],
    ['pbkdf2 with a billion iterations', `require('crypto').pbkdf2Sync('pw', 'salt', 1e9, 64, 'sha512')`, /iterations are limited/],
    ['an RSA key of 16384 bits', `require('crypto').generateKeyPairSync('rsa', { modulusLength: 16384 })`, /modulusLength is limited/],
    [
      'a subtle PBKDF2 of a billion iterations',
      `await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(8), iterations: 1e9 }, await crypto.subtle.importKey('raw', new Uint8Array(8), 'PBKDF2', false, ['deriveBits']), 256)`,
      /iterations are limited/,
    ],
    [
      'a subtle RSA key of 16384 bits',
      `await crypto.subtle.generateKey({ name: 'RSA-PSS', modulusLength: 16384, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign'])`,
      /modulusLength is limited/,
    ],
    ['a derived key of a gigabyte', `require('crypto').pbkdf2Sync('pw', 'salt', 1, 1e9, 'sha256')`, /keylen is out of range/],
    // Node checks a given prime (seconds at 3,072 bits, a minute at 8,192) and generates one of a given length.
    [
      'a Diffie-Hellman prime of 8192 bits to check',
      `require('crypto').createDiffieHellman(require('crypto').getDiffieHellman('modp18').getPrime())`,
      /primes of at most 2048 bits/,
    ],
    ['a Diffie-Hellman prime of 2048 bits to generate', `require('crypto').createDiffieHellman(2048)`, /generates primes of at most 1024 bits/],
    [
      'a Diffie-Hellman private key longer than its prime',
      `const d = require('crypto').createDiffieHellman(require('crypto').getDiffieHellman('modp2').getPrime()); d.setPrivateKey(Buffer.alloc(4096, 1)); d.generateKeys()`,
      /private key is larger than the prime/,
    ],
    ['a certificate of a megabyte', `new (require('crypto').X509Certificate)(Buffer.alloc(1048576, 0x30))`, /larger than the sandbox allows/],
  ])('refuses %s before it starts', async (_name, call, reason) => {
    const started = Date.now();
    const result = await reactor.run(input('kdf', `module.exports = async () => { ${call}; return { body: 'ran' }; };`));
    expect(result.ok).toBe(false);
    expect(detail(result)).toMatch(reason);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
  });

  it('ends heavy crypto in a loop at the deadline', async () => {
    const result = await reactor.run(
      input('kdf-loop', `module.exports = async () => { for (;;) require('crypto').pbkdf2Sync('pw', 'salt', 1000000, 64, 'sha512'); };`),
    );
    expect(detail(result)).toMatch(/timed out/);
    expect(okBody(await reactor.run(input('next', echo)))).toBe('alive');
  });

  it('bounds a zip bomb: inflating past the buffer limit stops with an error, in one call or with a callback', async () => {
    const result = await reactor.run(
      input(
        'bomb',
        `module.exports = async () => {
          const zlib = require('zlib');
          // 64 gzip members of 1 MiB of zeros each (about 64 KiB in all) inflate to 64 MiB, past the bound.
          const tries = {};
          const big = Buffer.concat(Array.from({ length: 64 }, () => zlib.gzipSync(Buffer.alloc(1024 * 1024))));
          try { zlib.gunzipSync(big); tries.sync = 'inflated'; } catch (e) { tries.sync = e.message; }
          try { zlib.brotliDecompressSync(zlib.brotliCompressSync(Buffer.alloc(1024 * 1024)), { }); tries.small = 'ok'; } catch (e) { tries.small = e.message; }
          tries.callback = await new Promise((resolve) => zlib.gunzip(big, (e) => resolve(e ? e.message : 'inflated')));
          return { body: { tries } };
        };`,
      ),
    );
    const body = okBody(result) as { tries: Record<string, string> };
    expect(body.tries).toEqual({
      sync: expect.stringMatching(/zlib output exceeds the sandbox limit of \d+ bytes/),
      small: 'ok',
      callback: expect.stringMatching(/zlib output exceeds/),
    });
  });

  it('gives packages a Proxy that cannot wrap an array, so the length checks of the builtins still hold', async () => {
    const body = okBody(
      await reactor.run(
        input(
          'proxy',
          `module.exports = async () => {
            const attempt = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
            let reads = 0;
            const liar = new Proxy({}, { get: (t, k) => (k === 'length' ? (reads++ ? 1e10 : 1) : undefined) });
            return { body: {
              object: typeof new Proxy({ a: 1 }, {}).a,
              array: attempt(() => new Proxy([], {})),
              revocable: attempt(() => Proxy.revocable([1], {})),
              ofProxiedArray: attempt(() => new Proxy(new Proxy({}, {}), {}) && 'ok'),
              liarJoin: attempt(() => Array.prototype.join.call(liar, ',').length),
            } };
          };`,
        ),
      ),
    );
    expect(body).toEqual({
      object: 'number',
      array: 'TypeError: A Proxy of an array is not available in the sandbox',
      revocable: 'TypeError: A Proxy of an array is not available in the sandbox',
      ofProxiedArray: 'ok',
      liarJoin: 0,
    });
  });
});
