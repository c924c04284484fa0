import { createHash } from 'node:crypto';
import { API_KEY_PREFIX, generateApiKey, hashApiKey, looksLikeApiKey, randomBase62 } from './api-key';

describe('API keys', () => {
  it('are key_ followed by at least 32 base62 characters', () => {
    for (let i = 0; i < 50; i++) expect(generateApiKey()).toMatch(/^key_[0-9A-Za-z]{32,}$/);
  });

  it('are different every time', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
    expect(keys.size).toBe(1000);
  });

  it('draw on the whole base62 alphabet', () => {
    const seen = new Set(randomBase62(20_000));
    expect(seen.size).toBe(62);
  });

  it('are stored as their SHA-256 hex digest', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).not.toContain(key.slice(API_KEY_PREFIX.length));
  });

  it.each([
    ['a generated key', generateApiKey(), true],
    ['the shortest well-formed key', `key_${'a'.repeat(32)}`, true],
    ['one character short', `key_${'a'.repeat(31)}`, false],
    ['no prefix', 'a'.repeat(40), false],
    ['another prefix', `pk_${'a'.repeat(40)}`, false],
    ['empty', '', false],
    ['absurdly long', `key_${'a'.repeat(500)}`, false],
  ])('looksLikeApiKey: %s -> %s', (_, value, expected) => {
    expect(looksLikeApiKey(value)).toBe(expected);
  });
});
