import { hash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 248 is the largest multiple of 62 below 256: bytes at or above it are dropped so every character is uniform.
const UNBIASED_LIMIT = 248;

/** `length` base62 characters from the CSPRNG, without modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < UNBIASED_LIMIT) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const API_KEY_PREFIX = 'key_';
const API_KEY_RANDOM_LENGTH = 40;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase62(API_KEY_RANDOM_LENGTH);
}

/** Only this digest is stored; a key has 238 bits of entropy, so an unsalted SHA-256 is sufficient. */
export function hashApiKey(key: string): string {
  // One call, no Hash object: it runs on every authenticated request.
  return hash('sha256', key, 'hex');
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) && value.length >= API_KEY_PREFIX.length + 32 && value.length <= 200;
}
