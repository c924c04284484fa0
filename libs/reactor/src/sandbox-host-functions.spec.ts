import { createHmac } from 'node:crypto';
import { hmac } from './sandbox-host-functions';

describe('hmac (HMAC over the one-shot hash)', () => {
  const data = Buffer.from('{"reference":"ord_7f3a9c","amount":{"value":1250,"currency":"EUR"}}');

  it.each(['md5', 'sha1', 'sha256', 'sha384', 'sha512'])(
    'gives the bytes of createHmac for %s, with keys shorter than, as long as and longer than its block',
    (algorithm) => {
      for (const length of [0, 1, 20, 63, 64, 65, 127, 128, 129, 300]) {
        const key = Buffer.alloc(length, (length * 7) % 256 || 1);
        expect({ length, mac: hmac(algorithm, key, data).toString('hex') }).toEqual({ length, mac: createHmac(algorithm, key).update(data).digest('hex') });
      }
    },
  );

  it('gives the bytes of createHmac for empty data and for data longer than a block', () => {
    const key = Buffer.from('bench-signing-secret');
    expect(hmac('sha256', key, new Uint8Array(0)).equals(createHmac('sha256', key).digest())).toBe(true);
    const long = Buffer.alloc(10_000, 0xa5);
    expect(hmac('sha512', key, long).equals(createHmac('sha512', key).update(long).digest())).toBe(true);
  });
});
