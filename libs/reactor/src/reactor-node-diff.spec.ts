import { generateKeyPairSync } from 'node:crypto';
import { describeAgainstNode } from '../test/support/node-diff';

/**
 * Differential tests of the built-in modules: each case runs in Node itself and in a real sandbox, on the same inputs,
 * and must give the same JSON. Cases are deterministic (random or padded-random outputs are checked by a round trip).
 */
const rsa = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const ec = generateKeyPairSync('ec', {
  namedCurve: 'P-256',
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const ed = generateKeyPairSync('ed25519', { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
const KEYS = { rsa, ec, ed };

const CASES: Record<string, Record<string, string>> = {
  buffer: {
    encodings: `const b = Buffer.from('héllo wörld ✓ \\u{1F600}'); return ['hex', 'base64', 'base64url', 'latin1', 'utf16le', 'ascii', 'utf8'].map((e) => [e, b.toString(e), Buffer.from(b.toString(e), e).toString('hex')]);`,
    ints: `const b = Buffer.alloc(16); b.writeUInt32BE(0xdeadbeef, 0); b.writeInt16LE(-2, 4); b.writeDoubleBE(3.25, 8); return [b.toString('hex'), b.readUInt32LE(0), b.readInt16LE(4), b.readDoubleBE(8), b.readUInt8(1)];`,
    ops: `const a = Buffer.from('abcdef'); return [Buffer.concat([a, Buffer.from([1, 2])]).toString('hex'), a.slice(1, 3).toString(), a.subarray(-2).toString(), Buffer.compare(a, Buffer.from('abd')), a.equals(Buffer.from('abcdef')), a.indexOf('cd'), a.includes('zz'), Buffer.byteLength('✓✓'), Buffer.isBuffer(a), JSON.stringify(a.slice(0, 2))];`,
    widths: `const b = Buffer.from('0102f3f4f5f6f7f8', 'hex'); const w = Buffer.alloc(12);
      w.writeUIntBE(0x123456, 0, 3); w.writeIntLE(-2, 3, 3); w.writeUIntLE(0xabcdef012345, 6, 6);
      return [b.readUIntBE(0, 6), b.readUIntLE(2, 3), b.readIntBE(2, 2), b.readIntLE(3, 5), w.toString('hex'), Buffer.from('abcabc').lastIndexOf('bc'), Buffer.from('abcabc').lastIndexOf(97, 2),
        Buffer.from('0102030405060708', 'hex').swap16().toString('hex'), Buffer.from('0102030405060708', 'hex').swap32().toString('hex'), Buffer.from('0102030405060708', 'hex').swap64().toString('hex')];`,
    withoutNew: `const errs = []; try { Buffer(3, 'utf8'); } catch (e) { errs.push(e.name, e.code); }
      const b = Buffer('abc'), n = new Buffer('6162', 'hex'), z = Buffer(3), a = new Buffer([1, 2, 300]), s = Buffer.from('abcd').subarray(1, 3);
      return [b.toString('hex'), n.toString(), z.toString('hex'), a.toString('hex'), Buffer('YQ==', 'base64').toString(), new Buffer(new Uint8Array([9]).buffer).toString('hex'),
        b instanceof Buffer, z instanceof Uint8Array, b.constructor === Buffer, Buffer.prototype.constructor === Buffer, Object.getPrototypeOf(Buffer) === Uint8Array,
        s instanceof Buffer, s.toString(), Buffer.from('ab').map((x) => x + 1).toString(), Buffer.of(65, 66).toString(), Buffer.isBuffer(Buffer('x')), Buffer.name, Buffer.length, errs];`,
    fromForms: `return [Buffer.from([256, -1, 65]).toString('hex'), Buffer.from(new Uint8Array([1, 2]).buffer).toString('hex'), Buffer.from({ type: 'Buffer', data: [7, 8] }).toString('hex'), new Buffer.from('x').toString(), Buffer.alloc(4, 'ab').toString(), Buffer.from('zz', 'hex').length];`,
  },
  crypto: {
    hashes: `const c = require('crypto'); return ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'sha512-256', 'sha3-256', 'ripemd160', 'blake2b512', 'RSA-SHA256'].map((a) => [a, c.createHash(a).update('abc').update(Buffer.from([1, 2])).digest('hex'), c.createHmac(a, 'key').update('abc').digest('base64')]);`,
    ciphers: `const c = require('crypto'); const key = Buffer.alloc(32, 7), iv = Buffer.alloc(16, 3), nonce = Buffer.alloc(12, 5); const r = {};
      for (const alg of ['aes-256-cbc', 'aes-256-ctr', 'aes-128-cbc']) { const k = alg.includes('128') ? key.subarray(0, 16) : key; const e = c.createCipheriv(alg, k, iv); const ct = Buffer.concat([e.update('secret card data', 'utf8'), e.final()]); const d = c.createDecipheriv(alg, k, iv); r[alg] = [ct.toString('hex'), d.update(ct, undefined, 'utf8') + d.final('utf8')]; }
      for (const alg of ['aes-256-gcm', 'chacha20-poly1305']) { const e = c.createCipheriv(alg, key, nonce, { authTagLength: 16 }); e.setAAD(Buffer.from('aad')); const ct = Buffer.concat([e.update('4242424242424242'), e.final()]); const tag = e.getAuthTag(); const d = c.createDecipheriv(alg, key, nonce, { authTagLength: 16 }); d.setAAD(Buffer.from('aad')); d.setAuthTag(tag); r[alg] = [ct.toString('hex'), tag.toString('hex'), d.update(ct, undefined, 'utf8') + d.final('utf8')]; }
      const bad = c.createDecipheriv('aes-256-gcm', key, nonce); bad.setAuthTag(Buffer.alloc(16)); bad.update(Buffer.from('00', 'hex')); try { bad.final(); r.badTag = 'accepted'; } catch (e) { r.badTag = 'refused'; }
      return r;`,
    kdf: `const c = require('crypto'); return [c.pbkdf2Sync('pw', 'salt', 1000, 32, 'sha256').toString('hex'), c.scryptSync('pw', 'salt', 32, { N: 1024 }).toString('hex'), Buffer.from(c.hkdfSync('sha256', 'ikm', 'salt', 'info', 42)).toString('hex'), c.timingSafeEqual(Buffer.from('ab'), Buffer.from('ab'))];`,
    rsa: `const c = require('crypto'); const { rsa } = cfg; const msg = Buffer.from('sign me');
      const key = c.createPrivateKey(rsa.privateKey), pub = c.createPublicKey(rsa.privateKey);
      const oaep = c.publicEncrypt({ key: rsa.publicKey, oaepHash: 'sha256' }, msg), pkcs1 = c.publicEncrypt({ key: pub, padding: c.constants.RSA_PKCS1_PADDING }, msg);
      const pss = c.sign('sha256', msg, { key: rsa.privateKey, padding: c.constants.RSA_PKCS1_PSS_PADDING });
      return [c.createSign('RSA-SHA256').update(msg).sign(rsa.privateKey, 'base64'), c.sign('sha256', msg, key).toString('hex'),
        c.privateDecrypt({ key: rsa.privateKey, oaepHash: 'sha256' }, oaep).toString(), c.privateDecrypt({ key, padding: c.constants.RSA_PKCS1_PADDING }, pkcs1).toString(),
        c.verify('sha256', msg, { key: pub, padding: c.constants.RSA_PKCS1_PSS_PADDING }, pss), c.createVerify('sha256').update(msg).verify(rsa.publicKey, c.sign('sha256', msg, key)),
        pub.export({ type: 'spki', format: 'pem' }) === rsa.publicKey, key.type, pub.asymmetricKeyType, pub.asymmetricKeyDetails.modulusLength, pub.export({ format: 'jwk' }).e];`,
    ecAndEd: `const c = require('crypto'); const { ec, ed } = cfg; const msg = Buffer.from('m');
      const sig = c.sign('sha256', msg, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' });
      return [sig.length, c.verify('sha256', msg, { key: ec.publicKey, dsaEncoding: 'ieee-p1363' }, sig), c.sign(null, msg, ed.privateKey).toString('hex'),
        c.createPublicKey(ec.privateKey).export({ format: 'jwk' }).crv, c.createSecretKey(Buffer.from('k')).export().toString()];`,
    keygen: `const c = require('crypto'); const { publicKey, privateKey } = c.generateKeyPairSync('rsa', { modulusLength: 1024 }); const e = c.generateKeyPairSync('ec', { namedCurve: 'prime256v1', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
      return [publicKey.type, privateKey.asymmetricKeyDetails.modulusLength, c.verify('sha256', Buffer.from('x'), publicKey, c.sign('sha256', Buffer.from('x'), privateKey)), e.publicKey.startsWith('-----BEGIN PUBLIC KEY-----'), typeof c.randomUUID(), c.randomBytes(8).length, c.randomInt(5) < 5];`,
  },
  stream: {
    from: `const { Readable, Writable } = require('stream'); const out = [];
      const fromArray = await Readable.from(['a', 'b', 'c']).toArray();
      async function* gen() { yield 'x'; await new Promise((r) => setTimeout(r, 1)); yield 'y'; }
      for await (const chunk of Readable.from(gen())) out.push(chunk);
      const bytes = []; for await (const c of Readable.from(Buffer.from('abc'))) bytes.push(Buffer.isBuffer(c) ? c.toString() : typeof c);
      const objectMode = Readable.from([1, 2]).readableObjectMode;
      const mapped = await Readable.from([1, 2, 3]).map((n) => n * 2).filter((n) => n > 2).toArray();
      return [fromArray, out, bytes, objectMode, mapped, typeof Writable, Readable.from([]) instanceof require('stream'), require('stream').Stream === require('stream')];`,
    promises: `const stream = require('stream'); const { pipeline, finished } = require('stream/promises'); const zlib = require('zlib');
      const chunks = []; const sink = new stream.Writable({ write(c, e, cb) { chunks.push(c.toString()); cb(); } });
      await pipeline(stream.Readable.from(['a', 'b']), async function* (source) { for await (const c of source) yield String(c).toUpperCase(); }, sink);
      const pass = new stream.PassThrough(); pass.end('done'); pass.resume(); await finished(pass);
      let failed; try { await pipeline(stream.Readable.from(['x']), new stream.Transform({ transform(c, e, cb) { cb(new Error('boom')); } }), new stream.PassThrough()); } catch (e) { failed = e.message; }
      const viaCallback = await new Promise((resolve) => stream.pipeline(stream.Readable.from(['q']), new stream.PassThrough(), (e) => resolve(e === undefined ? 'undefined' : String(e))));
      return [chunks, stream.promises.pipeline === pipeline, failed, viaCallback, require('util').promisify(stream.finished) === finished,
        await require('util').promisify(setTimeout)(1, 'v'), require('util').promisify.custom === Symbol.for('nodejs.util.promisify.custom')];`,
    consumers: `const { Readable } = require('stream'); const c = require('stream/consumers');
      return [await c.text(Readable.from(['h\u00e9', 'llo'])), await c.json(Readable.from([Buffer.from('{"a":'), Buffer.from('[1]}')])),
        (await c.buffer(Readable.from(['ab', Buffer.from('cd')]))).toString('hex'), (await c.arrayBuffer(Readable.from([Buffer.from([1, 2])]))).byteLength];`,
    subpaths: `const t = require('timers/promises'); const started = Date.now(); const v = await t.setTimeout(5, 'later'); const im = await t.setImmediate('now');
      const ac = new AbortController(); const p = t.setTimeout(10000, 'never', { signal: ac.signal }); ac.abort(); let aborted; try { await p; } catch (e) { aborted = [e.name, e.code]; }
      const ticks = []; for await (const x of t.setInterval(2, 'tick')) { ticks.push(x); if (ticks.length === 3) break; }
      return [v, im, aborted, ticks, Date.now() - started >= 5, require('util/types').isDate(new Date()), require('path/posix').join('a', '..', 'b'), typeof require('assert/strict').deepEqual, typeof require('node:stream/promises').pipeline];`,
  },
  querystring: {
    roundTrip: `const q = require('querystring'); return [q.stringify({ a: [1, 2], b: 'x y&z', c: '' }), q.parse('a=1&a=2&b=%20x+y&c'), q.escape('a b/ü'), q.unescape('%41%zz'), q.unescape('%E2%9C%93+x', true)];`,
  },
  url: {
    legacy: `const u = require('url'); const p = u.parse('https://user:pw@example.com:8080/p/a/t/h?query=string&a=1#hash', true); return [p.host, p.pathname, p.query, p.hash, p.auth, u.format({ protocol: 'https', hostname: 'x.test', pathname: '/a b', query: { q: 'ü' } }), u.resolve('http://a/b/c', '../d')];`,
    whatwg: `const { URL, URLSearchParams } = require('url'); const x = new URL('/p?a=1&b=2', 'https://example.com'); x.searchParams.append('c', 'd e'); return [x.href, x.origin, [...new URLSearchParams('a=1&a=2').getAll('a')]];`,
  },
  util: {
    format: `const u = require('util'); return [u.format('%s=%d %i %f %j %o %%', 'a', 42.5, 42.5, '1.5', { x: 1 }, [1]), u.format('no args', 1, 'two', { three: 3 }), u.format('%s', null, undefined), u.format(1, 2), u.format('%c css', 'color: red')];`,
    inspect: `const u = require('util'); return [u.inspect({ a: [1, { b: 'c' }], d: 'e' }), u.inspect('str'), u.inspect([1, 2, 3]), u.isDeepStrictEqual({ a: [1] }, { a: [1] }), u.types.isDate(new Date()), typeof u.promisify, typeof new u.TextEncoder().encode];`,
  },
  zlib: {
    roundTrips: `const z = require('zlib'); const text = 'card data '.repeat(50); const r = {};
      for (const [c, d] of [['gzipSync', 'gunzipSync'], ['deflateSync', 'inflateSync'], ['deflateRawSync', 'inflateRawSync'], ['brotliCompressSync', 'brotliDecompressSync']]) { const packed = z[c](text); r[c] = [packed.toString('base64'), z[d](packed).toString() === text, z.unzipSync ? true : false]; }
      r.level = z.deflateSync(text, { level: 1 }).toString('hex'); r.bad = (() => { try { z.gunzipSync(Buffer.from('nope')); return 'accepted'; } catch (e) { return 'refused'; } })();
      return r;`,
    callbacks: `const z = require('zlib'); const { promisify } = require('util'); const packed = await promisify(z.gzip)('abc'); return await new Promise((resolve, reject) => z.gunzip(packed, (e, out) => e ? reject(e) : resolve(out.toString())));`,
  },
};

describeAgainstNode('Built-in modules: the same results as Node', CASES, () => KEYS);
