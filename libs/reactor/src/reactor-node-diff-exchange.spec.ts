import { makeCertificates } from '../test/support/certificates';
import { describeAgainstNode } from '../test/support/node-diff';

/**
 * Differential tests of key agreement and certificates (`createECDH`, `createDiffieHellman`, `getDiffieHellman`,
 * `X509Certificate`, `Certificate`): Node itself and a sandbox, the same inputs, the same JSON out. Keys are fixed where
 * the result is then fixed; generated ones are checked by agreeing on the same secret. Errors compare name, code and
 * message.
 */
const caught = `const caught = (f) => { try { return ['ok', f()]; } catch (e) { return [e.name, e.code, e.message]; } };`;

const CASES: Record<string, Record<string, string>> = {
  ecdh: {
    fixedKeys: `${caught} const c = require('crypto'); const out = {};
      for (const curve of ['prime256v1', 'secp384r1', 'secp521r1', 'secp256k1']) {
        const a = c.createECDH(curve), b = c.createECDH(curve);
        const size = { prime256v1: 32, secp384r1: 48, secp521r1: 66, secp256k1: 32 }[curve];
        const fixed = (byte) => Buffer.concat([Buffer.alloc(1), Buffer.alloc(size - 1, byte)]);
        a.setPrivateKey(fixed(7)); b.setPrivateKey(fixed(3).toString('hex'), 'hex');
        out[curve] = [a.getPublicKey('hex'), a.getPublicKey('base64', 'compressed'), a.getPublicKey(undefined, 'hybrid'), a.getPrivateKey('hex'),
          a.computeSecret(b.getPublicKey()).toString('hex'), a.computeSecret(b.getPublicKey('hex', 'compressed'), 'hex', 'base64'),
          c.ECDH.convertKey(a.getPublicKey(), curve, undefined, 'hex', 'compressed'), c.ECDH.convertKey(a.getPublicKey('hex', 'compressed'), curve, 'hex', 'base64'),
          caught(() => a.computeSecret(Buffer.from([4, 1, 2]))), caught(() => a.getPublicKey('hex', 'wrong'))];
      }
      return out;`,
    generated: `${caught} const c = require('crypto'); const a = c.createECDH('prime256v1'), b = c.createECDH('prime256v1');
      const pubA = a.generateKeys(), pubB = b.generateKeys('hex', 'compressed');
      const fresh = c.createECDH('secp256k1');
      return [pubA.length, pubB.length, a.getPrivateKey().length >= 30 && a.getPrivateKey().length <= 32, a.computeSecret(pubB, 'hex').equals(b.computeSecret(pubA)),
        caught(() => fresh.getPublicKey()), caught(() => fresh.getPrivateKey()), caught(() => c.createECDH('nope')),
        caught(() => fresh.setPrivateKey(Buffer.alloc(32, 0))), caught(() => fresh.computeSecret(pubA)),
        fresh.setPublicKey(c.createECDH('secp256k1').generateKeys()).getPublicKey().length, caught(() => fresh.setPublicKey(pubA)), typeof c.ECDH, c.createECDH('prime256v1') instanceof c.ECDH, c.getCurves().includes('secp256k1')];`,
  },
  diffieHellman: {
    groups: `${caught} const c = require('crypto'); const out = {};
      for (const g of ['modp1', 'modp2', 'modp5', 'modp14', 'modp15', 'modp16']) {
        const a = c.getDiffieHellman(g), b = c.createDiffieHellmanGroup(g); const pa = a.generateKeys(), pb = b.generateKeys('base64');
        const size = a.getPrime().length, near = (n) => n <= size && n >= size - 4; // a key's length varies with its leading zero bytes
        out[g] = [a.getPrime('hex'), a.getGenerator('hex'), a.verifyError, near(pa.length), near(a.getPrivateKey().length), a.computeSecret(pb, 'base64', 'hex') === b.computeSecret(pa).toString('hex'),
          a.computeSecret(pb, 'base64').length, typeof a.setPrivateKey, Object.keys(a)];
      }
      out.unknown = caught(() => c.getDiffieHellman('modp99'));
      return out;`,
    customPrime: `${caught} const c = require('crypto'); const prime = c.getDiffieHellman('modp2').getPrime('hex');
      const a = c.createDiffieHellman(prime, 'hex'), b = c.createDiffieHellman(Buffer.from(prime, 'hex'), Buffer.from([2]));
      a.setPrivateKey(Buffer.alloc(64, 9)); b.setPrivateKey('0a0b0c', 'hex');
      const noPub = caught(() => a.getPublicKey());
      const pa = a.generateKeys('hex'), pb = b.generateKeys();
      const fresh = c.createDiffieHellman(prime, 'hex', '05', 'hex'); const pf = fresh.generateKeys();
      return [noPub, pa, pb.toString('hex'), a.getPrivateKey('hex'), a.computeSecret(pb).toString('hex'), b.computeSecret(pa, 'hex', 'base64'),
        a.verifyError, fresh.getGenerator('hex'), fresh.verifyError, pf.length > 120 && pf.length <= 128, fresh.getPrivateKey().length > 120 && fresh.getPrivateKey().length <= 128, fresh.computeSecret(pa, 'hex').equals(a.computeSecret(pf)),
        caught(() => a.computeSecret(Buffer.from([5]))), caught(() => c.createDiffieHellman(prime, 'hex').computeSecret(pb)),
        caught(() => c.createDiffieHellman(prime, 'hex').getPrivateKey()), c.createDiffieHellman('abc').verifyError, c.createDiffieHellman(Buffer.from('0f', 'hex')).verifyError,
        c.createDiffieHellman(prime, 'hex') instanceof c.DiffieHellman, c.DiffieHellman(prime, 'hex').getPrime('hex') === prime, caught(() => c.createDiffieHellman({}))];`,
    generatedPrime: `const c = require('crypto'); const a = c.createDiffieHellman(512); const b = c.createDiffieHellman(a.getPrime(), a.getGenerator());
      const pa = a.generateKeys(), pb = b.generateKeys();
      return [a.getPrime().length, a.getGenerator('hex'), a.verifyError, a.computeSecret(pb).equals(b.computeSecret(pa))];`,
  },
  x509: {
    fields: `const { X509Certificate } = require('crypto'); const fromPem = new X509Certificate(cfg.leaf), fromDer = new X509Certificate(Buffer.from(cfg.leafDer, 'base64'));
      const fields = ['subject', 'subjectAltName', 'issuer', 'infoAccess', 'validFrom', 'validTo', 'fingerprint', 'fingerprint256', 'fingerprint512', 'keyUsage', 'serialNumber', 'ca', 'issuerCertificate'];
      return [fields.map((f) => [f, fromPem[f]]), fields.every((f) => JSON.stringify(fromPem[f]) === JSON.stringify(fromDer[f])), fromPem.raw.toString('hex'), fromPem.raw === fromPem.raw,
        fromPem.validFromDate.toISOString(), fromPem.validToDate.getTime(), fromPem.toString(), JSON.stringify({ cert: fromDer }), new X509Certificate(cfg.ca).ca];`,
    publicKey: `const c = require('crypto'); const leaf = new c.X509Certificate(cfg.leaf), ca = new c.X509Certificate(cfg.ca); const key = leaf.publicKey;
      return [key.type, key.asymmetricKeyType, key.asymmetricKeyDetails.modulusLength, key.export({ type: 'spki', format: 'pem' }), ca.publicKey.asymmetricKeyDetails.namedCurve,
        key instanceof c.KeyObject, key === leaf.publicKey, c.publicEncrypt(key, Buffer.from('x')).length];`,
    checks: `${caught} const c = require('crypto'); const leaf = new c.X509Certificate(cfg.leaf), ca = new c.X509Certificate(cfg.ca);
      return [leaf.checkHost('api.example.com'), leaf.checkHost('API.EXAMPLE.COM'), leaf.checkHost('a.wild.example.com'), leaf.checkHost('a.b.wild.example.com'), leaf.checkHost('other.example.com'),
        leaf.checkHost('a.wild.example.com', { wildcards: false }), leaf.checkHost('api.example.com', { subject: 'never' }), leaf.checkEmail('ops@example.com'), leaf.checkEmail('x@example.com'),
        leaf.checkIP('10.0.0.1'), leaf.checkIP('10.0.0.2'), leaf.checkIssued(ca), ca.checkIssued(leaf), ca.checkIssued(ca), leaf.verify(ca.publicKey), leaf.verify(leaf.publicKey),
        leaf.checkPrivateKey(c.createPrivateKey(cfg.leafKey)), leaf.checkPrivateKey(c.createPrivateKey(cfg.caKey)), caught(() => leaf.checkIssued({})), caught(() => leaf.verify(c.createPrivateKey(cfg.caKey)))];`,
    legacyAndErrors: `${caught} const c = require('crypto'); const legacy = new c.X509Certificate(cfg.leaf).toLegacyObject();
      return [JSON.parse(JSON.stringify(legacy)), Buffer.isBuffer(legacy.raw), caught(() => new c.X509Certificate('not a certificate')), caught(() => new c.X509Certificate(42))];`,
  },
  certificate: {
    spkac: `const { Certificate } = require('crypto'); const spkac = Buffer.from(cfg.spkac);
      return [Certificate.verifySpkac(spkac), Certificate.exportChallenge(spkac).toString(), Certificate.exportPublicKey(cfg.spkac).toString(), new Certificate().verifySpkac(Buffer.from('bogus'))];`,
  },
};

describeAgainstNode('Key agreement and certificates: the same results as Node', CASES, makeCertificates);
