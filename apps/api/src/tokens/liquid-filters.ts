import { randomInt } from 'node:crypto';
import { JSONPath } from 'jsonpath-plus';

/**
 * The platform's custom expression filters (its "Filters" documentation), on top of Liquid's standard ones. A failure
 * throws FilterFailure, whose message never quotes the value being filtered.
 */
export class FilterFailure extends Error {}

const ALPHANUMERIC = /[A-Za-z0-9]/;
const DIGIT = /[0-9]/;

function text(value: unknown, filter: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new FilterFailure(`${filter} applies to a string`);
}

function count(value: unknown, name: string, filter: string): number {
  const n = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
  if (!Number.isInteger(n) || (n as number) < 0 || (n as number) > 10_000) throw new FilterFailure(`${filter}: ${name} must be a non-negative integer`);
  return n as number;
}

function flag(value: unknown): boolean {
  return value === true || value === 'true';
}

function maskChar(value: unknown, filter: string): string {
  if (value === undefined) return 'X';
  if (typeof value !== 'string' || [...value].length !== 1) throw new FilterFailure(`${filter}: the mask character must be one character`);
  return value;
}

/** `reveal_last: n[, char]`: letters and digits before the last n characters masked; delimiters kept. */
export function revealLast(value: unknown, length: unknown, mask?: unknown): string | null {
  if (value === null || value === undefined) return null;
  const s = text(value, 'reveal_last');
  const n = count(length, 'length', 'reveal_last');
  const c = maskChar(mask, 'reveal_last');
  if (n >= s.length) return s;
  const cut = s.length - n;
  return [...s.slice(0, cut)].map((ch) => (ALPHANUMERIC.test(ch) ? c : ch)).join('') + s.slice(cut);
}

/** `reveal: first, last[, char[, preserve]]`: everything between masked but the preserved characters. */
export function reveal(value: unknown, first?: unknown, last?: unknown, mask?: unknown, preserve?: unknown): string | null {
  if (value === null || value === undefined) return null;
  const s = text(value, 'reveal');
  const head = first === undefined ? 0 : count(first, 'reveal_first', 'reveal');
  const tail = last === undefined ? 0 : count(last, 'reveal_last', 'reveal');
  const c = maskChar(mask, 'reveal');
  const keep = typeof preserve === 'string' ? preserve : '';
  const masked = (chars: string) => [...chars].map((ch) => (keep.includes(ch) ? ch : c)).join('');
  if (s.length <= head + tail) return masked(s);
  const out = s.slice(0, head) + masked(s.slice(head, s.length - tail)) + s.slice(s.length - tail);
  return out === s ? masked(s) : out;
}

export function last4(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const s = text(value, 'last4');
  return s.slice(-4);
}

/** `card_mask: reveal_bin, reveal_last4[, char[, preserve]]`: the BIN is 6 digits below 16 digits, 8 from 16. */
export function cardMask(value: unknown, revealBin?: unknown, revealLast4?: unknown, mask?: unknown, preserve?: unknown): string | null {
  if (value === null || value === undefined) return null;
  const s = text(value, 'card_mask');
  const digits = s.replace(/[^0-9]/g, '').length;
  const bin = flag(revealBin) ? (digits < 16 ? 6 : 8) : 0;
  const lastFour = flag(revealLast4) ? 4 : 0;
  const c = maskChar(mask, 'card_mask');
  const keep = typeof preserve === 'string' ? preserve : '';
  let seen = 0;
  const out = [...s]
    .map((ch) => {
      if (!DIGIT.test(ch)) return keep.includes(ch) ? ch : c;
      seen++;
      return seen <= bin || seen > digits - lastFour ? ch : c;
    })
    .join('');
  return out === s ? [...s].map((ch) => (DIGIT.test(ch) || !keep.includes(ch) ? c : ch)).join('') : out;
}

/** `json: '$.path'`: a JSONPath that must select at most one value (none: null). */
export function json(value: unknown, path: unknown): unknown {
  if (typeof path !== 'string' || !path.startsWith('$')) throw new FilterFailure("json: the argument must be a JSONPath starting with '$'");
  if (value === null || value === undefined) return null;
  let results: unknown[];
  try {
    results = JSONPath({ path, json: value as object, wrap: true, eval: 'safe' }) as unknown[];
  } catch {
    throw new FilterFailure('json: the JSONPath expression is not valid');
  }
  if (results.length > 1) throw new FilterFailure('json: the JSONPath expression selects more than one value');
  return results[0] ?? null;
}

export function stringify(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALPHANUMERICS = `${LOWER}${DIGITS}`;

function pick(alphabet: string): string {
  return alphabet[randomInt(alphabet.length)]!;
}

function revealed(s: string, first: unknown, last: unknown, filter: string): { head: number; tail: number } {
  const head = first === undefined ? 0 : count(first, 'reveal_first_length', filter);
  const tail = last === undefined ? 0 : count(last, 'reveal_last_length', filter);
  if (head + tail > s.length) throw new FilterFailure(`${filter}: the value is shorter than the characters to reveal`);
  return { head, tail };
}

/** Random letters for letters, digits for digits; other characters kept; `first`/`last` characters revealed. */
export function aliasPreserveFormat(value: unknown, first?: unknown, last?: unknown): string {
  const s = text(value, 'alias_preserve_format');
  const { head, tail } = revealed(s, first, last, 'alias_preserve_format');
  const middle = [...s.slice(head, s.length - tail)].map((ch) => (DIGIT.test(ch) ? pick(DIGITS) : /[A-Za-z]/.test(ch) ? pick(LOWER) : ch)).join('');
  return s.slice(0, head) + middle + s.slice(s.length - tail);
}

/** Random letters and digits of the same length; `first`/`last` characters revealed. */
export function aliasPreserveLength(value: unknown, first?: unknown, last?: unknown): string {
  const s = text(value, 'alias_preserve_length');
  const { head, tail } = revealed(s, first, last, 'alias_preserve_length');
  const middle = Array.from({ length: s.length - head - tail }, () => pick(ALPHANUMERICS)).join('');
  return s.slice(0, head) + middle + s.slice(s.length - tail);
}

/** A random card-shaped alias (delimiters ` ` and `-` kept), optionally keeping the BIN and the last four digits. */
export function aliasCard(value: unknown, revealBin?: unknown, revealLast4?: unknown): string {
  const s = text(value, 'alias_card');
  const digits = s.replace(/[^0-9]/g, '');
  if (!/^[0-9 -]+$/.test(s) || digits.length < 12) throw new FilterFailure('alias_card applies to a card number');
  const bin = flag(revealBin) ? (digits.length < 16 ? 6 : 8) : 0;
  const lastFour = flag(revealLast4) ? 4 : 0;
  let seen = 0;
  return [...s]
    .map((ch) => {
      if (!DIGIT.test(ch)) return ch;
      seen++;
      return seen <= bin || seen > digits.length - lastFour ? ch : pick(DIGITS);
    })
    .join('');
}

export function padLeft(value: unknown, length: unknown, pad: unknown): string | null {
  if (value === null || value === undefined) return null;
  return text(value, 'pad_left').padStart(count(length, 'length', 'pad_left'), maskChar(pad, 'pad_left'));
}

export function padRight(value: unknown, length: unknown, pad: unknown): string | null {
  if (value === null || value === undefined) return null;
  return text(value, 'pad_right').padEnd(count(length, 'length', 'pad_right'), maskChar(pad, 'pad_right'));
}

/** Every custom filter by its name in expressions. */
export const PLATFORM_FILTERS: Record<string, (value: unknown, ...args: unknown[]) => unknown> = {
  reveal_last: revealLast,
  reveal,
  last4,
  card_mask: cardMask,
  json,
  stringify,
  alias_preserve_format: aliasPreserveFormat,
  alias_preserve_length: aliasPreserveLength,
  alias_card: aliasCard,
  pad_left: padLeft,
  pad_right: padRight,
};
