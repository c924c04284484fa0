import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  /** A self-signed CA (EC P-256), its key, a leaf it issued (RSA 2048, with DNS, wildcard, IP and e-mail names) and its key. */
  ca: string;
  caKey: string;
  leaf: string;
  leafKey: string;
  /** The leaf as DER, base64. */
  leafDer: string;
  /** A signed public key and challenge (`openssl spkac`), base64, challenge `gatehouse`. */
  spkac: string;
}

/** Made with the openssl command line, as the mutual-TLS spec does (Node cannot issue certificates). */
export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-x509-'));
  try {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '30',
      '-subj',
      '/C=NL/O=Gatehouse Test/CN=test-ca',
    );
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/C=NL/O=Gatehouse Test/OU=Proxies/CN=api.example.com');
    writeFileSync(
      join(dir, 'leaf.ext'),
      'subjectAltName=DNS:api.example.com,DNS:*.wild.example.com,IP:10.0.0.1,email:ops@example.com\n' +
        'keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n' +
        'authorityInfoAccess=OCSP;URI:http://ocsp.example.com,caIssuers;URI:http://ca.example.com/ca.pem\n',
    );
    openssl(
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-set_serial',
      '0x1f2e3d4c5b6a',
      '-out',
      'leaf.pem',
      '-days',
      '30',
      '-extfile',
      'leaf.ext',
    );
    const spkac = openssl('spkac', '-key', 'leaf.key', '-challenge', 'gatehouse')
      .toString()
      .trim()
      .replace(/^SPKAC=/, '');
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    const leaf = read('leaf.pem');
    const leafDer = Buffer.from(leaf.replace(/-----[^-]+-----|\s/g, ''), 'base64').toString('base64');
    return { ca: read('ca.pem'), caKey: read('ca.key'), leaf, leafKey: read('leaf.key'), leafDer, spkac };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
