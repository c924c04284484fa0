import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  dir: string;
  caPath: string;
  certPath: string;
  keyPath: string;
  ca: string;
  cert: string;
  key: string;
}

/** A throwaway CA and a server certificate for 127.0.0.1 / localhost signed by it, made by openssl. */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-stream-ca-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Gatehouse test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(at('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca-key.pem',
    '-CAcreateserial',
    '-out',
    'cert.pem',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
  return {
    dir,
    caPath: at('ca.pem'),
    certPath: at('cert.pem'),
    keyPath: at('key.pem'),
    ca: readFileSync(at('ca.pem'), 'utf8'),
    cert: readFileSync(at('cert.pem'), 'utf8'),
    key: readFileSync(at('key.pem'), 'utf8'),
  };
}
