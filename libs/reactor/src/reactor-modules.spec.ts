import { createRequire } from 'node:module';
import { Reactor, type TransformInput } from './index';
import { okBody } from '../test/support/reactor-results';
import { ensureSandboxModules } from '../test/support/sandbox-modules';

const nodeRequire = createRequire(__filename);

function input(code: string, args: TransformInput['args'] = { body: null, headers: {} }): TransformInput {
  return { tenantId: 'tenant-modules', code, args, configuration: {} };
}

describe('Reactor: modules a transform requires', () => {
  let reactor: Reactor;
  beforeAll(() => {
    ensureSandboxModules();
    reactor = new Reactor({ poolSize: 1, timeoutMs: 10000 });
  });
  afterAll(() => reactor.close());

  it('requires the built-in modules by name and by node: name, the same object twice', async () => {
    const body = okBody(
      await reactor.run(
        input(`module.exports = async () => {
          const names = ['buffer', 'crypto', 'querystring', 'url', 'util', 'events', 'string_decoder', 'stream', 'zlib', 'path', 'assert', 'punycode'];
          const kinds = {};
          for (const n of names) kinds[n] = typeof require(n) + ':' + (require(n) === require('node:' + n));
          return { body: kinds };
        };`),
      ),
    );
    // What Node's own modules are (events and assert export functions).
    for (const [name, kind] of Object.entries(body)) expect([name, kind]).toEqual([name, `${typeof nodeRequire(name)}:true`]);
  });

  it('joins streamed chunks as Node does: a gzip stream written in parts, a signature over several updates', async () => {
    const { createVerify, generateKeyPairSync } = nodeRequire('node:crypto') as typeof import('node:crypto');
    const { gunzipSync } = nodeRequire('node:zlib') as typeof import('node:zlib');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const body = okBody(
      await reactor.run(
        input(`module.exports = async () => {
          const zlib = require('zlib');
          const crypto = require('crypto');
          const gzip = zlib.createGzip();
          const out = [];
          gzip.on('data', (c) => out.push(c));
          const done = new Promise((resolve) => gzip.on('end', resolve));
          for (const part of ['alpha ', 'beta ', 'gamma']) gzip.write(part);
          gzip.end(Buffer.from([0, 255]));
          await done;
          const sign = crypto.createSign('SHA256');
          for (const part of ['one', 'two', Buffer.from([3])]) sign.update(part);
          return { body: { gzip: Buffer.concat(out).toString('base64'), signature: sign.sign(${JSON.stringify(pem)}, 'base64') } };
        };`),
      ),
    ) as { gzip: string; signature: string };
    expect(gunzipSync(Buffer.from(body.gzip, 'base64'))).toEqual(Buffer.from([...Buffer.from('alpha beta gamma'), 0, 255]));
    const verifier = createVerify('SHA256')
      .update('onetwo')
      .update(Buffer.from([3]));
    expect(verifier.verify(publicKey, body.signature, 'base64')).toBe(true);
  });

  it('answers a module it does not have, or refuses, with the reason', async () => {
    const body = okBody(
      await reactor.run(
        input(`module.exports = async () => {
          const tries = {};
          for (const n of ['fs', 'child_process', 'left-pad', 'ssh2', 'net']) {
            try { require(n); tries[n] = 'loaded'; } catch (e) { tries[n] = e.code + ' ' + e.message; }
          }
          return { body: tries };
        };`),
      ),
    );
    expect(body).toEqual({
      fs: "MODULE_NOT_FOUND Cannot find module 'fs': a transform has no file system",
      child_process: "MODULE_NOT_FOUND Cannot find module 'child_process': a transform cannot start processes or threads",
      'left-pad': "MODULE_NOT_FOUND Cannot find module 'left-pad'",
      ssh2: "MODULE_NOT_FOUND Cannot find module 'ssh2': it opens raw TCP sockets, which a transform has not",
      net: expect.stringContaining("Cannot find module 'net': a transform has no raw sockets"),
    });
  });

  it('runs the high-value packages', async () => {
    const body = okBody(
      await reactor.run(
        input(`module.exports = async () => {
          const CryptoJS = require('crypto-js');
          const forge = require('node-forge');
          const { v4, validate } = require('uuid');
          const jp = require('jsonpath');
          const { create } = require('xmlbuilder2');
          return { body: {
            cryptoJs: CryptoJS.SHA256('abc').toString(),
            forge: forge.md.sha256.create().update('abc').digest().toHex(),
            uuid: validate(v4()),
            jsonpath: jp.query({ a: [{ b: 1 }, { b: 2 }] }, '$.a[*].b'),
            xml: create({ root: { card: { '@last4': '4242' } } }).end(),
          } };
        };`),
      ),
    );
    const sha = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(body).toEqual({
      cryptoJs: sha,
      forge: sha,
      uuid: true,
      jsonpath: [1, 2],
      xml: '<?xml version="1.0"?><root><card last4="4242"/></root>',
    });
  });

  it("runs jose and node-jose over the sandbox's Web Crypto and crypto: JWT, JWS, JWE", async () => {
    const body = okBody(
      await reactor.run(
        input(`module.exports = async () => {
          const jose = require('jose');
          const nodeJose = require('node-jose');
          const secret = new TextEncoder().encode('a-string-secret-at-least-256-bits-long');
          const jwt = await new jose.SignJWT({ sub: 'card' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(1700000000).sign(secret);
          const verified = await jose.jwtVerify(jwt, secret);
          const { publicKey, privateKey } = await jose.generateKeyPair('RSA-OAEP-256', { extractable: true });
          const jwe = await new jose.CompactEncrypt(new TextEncoder().encode('4242424242424242')).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' }).encrypt(publicKey);
          const opened = new TextDecoder().decode((await jose.compactDecrypt(jwe, privateKey)).plaintext);
          const es = await jose.generateKeyPair('ES256');
          const jws = await new jose.CompactSign(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'ES256' }).sign(es.privateKey);
          const esOk = (await jose.compactVerify(jws, es.publicKey)).protectedHeader.alg;
          const keystore = nodeJose.JWK.createKeyStore();
          const key = await keystore.generate('RSA', 2048, { alg: 'RSA-OAEP-256', use: 'enc' });
          const encrypted = await nodeJose.JWE.createEncrypt({ format: 'compact' }, key).update(JSON.stringify({ number: '4242' })).final();
          const decrypted = JSON.parse((await nodeJose.JWE.createDecrypt(keystore).decrypt(encrypted)).plaintext.toString());
          return { body: { jwt, sub: verified.payload.sub, opened, parts: jwe.split('.').length, esOk, nodeJose: encrypted.split('.').length, decrypted } };
        };`),
      ),
    );
    expect(body).toEqual({
      jwt: expect.stringMatching(/^eyJhbGciOiJIUzI1NiJ9\.eyJzdWIiOiJjYXJkIiwiaWF0IjoxNzAwMDAwMDAwfQ\.[\w-]{43}$/),
      sub: 'card',
      opened: '4242424242424242',
      parts: 5,
      esOk: 'ES256',
      nodeJose: 5,
      decrypted: { number: '4242' },
    });
    const { createHmac } = await import('node:crypto');
    const [h, p, sig] = (body.jwt as string).split('.');
    expect(sig).toBe(createHmac('sha256', 'a-string-secret-at-least-256-bits-long').update(`${h}.${p}`).digest('base64url'));
  });

  it('keeps header names as the caller sent them and reads them case-insensitively; process as transforms read it', async () => {
    const body = okBody(
      await reactor.run(
        input(
          `module.exports = async (req) => {
            const h = req.args.headers;
            const started = process.hrtime.bigint();
            const ticked = await new Promise((resolve) => process.nextTick((a) => resolve(a), 'tick'));
            return { body: {
              keys: Object.keys(h), exact: h['Authorization'], lower: h.authorization, upper: h['CONTENT-TYPE'], has: 'AUTHORIZATION' in h,
              missing: h['x-none'], json: JSON.stringify(h), spread: { ...h },
              env: Object.keys(process.env).length, version: process.version === ${JSON.stringify(process.version)},
              hrtime: process.hrtime().length, elapsed: typeof (process.hrtime.bigint() - started), ticked,
            } };
          };`,
          { body: null, headers: { Authorization: 'Bearer x', 'content-type': 'application/json' } },
        ),
      ),
    );
    expect(body).toEqual({
      keys: ['Authorization', 'content-type'],
      exact: 'Bearer x',
      lower: 'Bearer x',
      upper: 'application/json',
      has: true,
      json: '{"Authorization":"Bearer x","content-type":"application/json"}',
      spread: { Authorization: 'Bearer x', 'content-type': 'application/json' },
      env: 0,
      version: true,
      hrtime: 2,
      elapsed: 'bigint',
      ticked: 'tick',
    });
  });

  it('runs setImmediate after the current code without the host, and still lets timers through when polled with it', async () => {
    const body = okBody(
      await reactor.run(
        input(`module.exports = async () => {
          const order = [];
          setImmediate((x) => order.push('immediate ' + x), 'a');
          const cleared = setImmediate(() => order.push('cleared'));
          clearImmediate(cleared);
          order.push('sync');
          await new Promise((resolve) => setImmediate(resolve));
          let chained = 0;
          await new Promise((resolve) => { const next = () => (++chained === 20000 ? resolve() : setImmediate(next)); next(); });
          let fired = false;
          setTimeout(() => { fired = true; }, 5);
          let polls = 0;
          await new Promise((resolve) => { const poll = () => (fired ? resolve() : (polls++, setImmediate(poll))); poll(); });
          return { body: { order, chained, fired, polled: polls > 0 } };
        };`),
      ),
    );
    expect(body).toEqual({ order: ['sync', 'immediate a'], chained: 20000, fired: true, polled: true });
  });
});
