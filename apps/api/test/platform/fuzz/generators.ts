import type { Json } from '../../support/openapi-document';

/**
 * What the fuzz tier (../fuzz-operations.test.ts) draws from: the seeded PRNG, hostile values, query strings and ids,
 * values made from the document's schemas, and the helpers that mutate a body at a path.
 */

/** mulberry32: small, fast, good enough to spread cases; one stream per operation so a case replays by seed + name. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, chance: (p: number) => next() < p, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]! };
}
export type Rng = ReturnType<typeof prng>;

export function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** JSON values a schema does not expect: boundaries, wrong types, odd strings. */
export const NASTY_VALUES: unknown[] = [
  0,
  -1,
  1,
  -0,
  1.5,
  0.1,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 32,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  1e308,
  -1e308,
  5e-324,
  true,
  false,
  null,
  [],
  [null],
  {},
  [[[]]],
  { a: { b: { c: {} } } },
  '',
  ' ',
  '0',
  '-1',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e308',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  'x'.repeat(201),
  'x'.repeat(401),
  'x'.repeat(5000),
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '😀'.repeat(60),
  '\u202e\u0301',
  'ǅ\u00ad\ufeff',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '../../etc/passwd',
  '%00',
  '%ZZ',
  '${7*7}',
  '{{7*7}}',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '2024-13-45T00:00:00Z',
  '0000-00-00T00:00:00Z',
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '1970-01-01T00:00:00Z',
  '2024-01-01T00:00:00+99:99',
  '2024-02-30T00:00:00Z',
  '2030-01-01',
  '2024-01-01T25:61:61Z',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '7D0F4A8E-1C2B-4D3E-9F60-123456789ABC',
  'javascript:alert(1)',
  'https://user:pass@example.com/',
  'https://example.com/?q=1#f',
  'http://127.0.0.1/',
  'https://[::1]/',
  'https://example.com:99999/',
  'https://%65xample.com/',
  'file:///etc/passwd',
  'https://' + 'a'.repeat(390) + '.com/',
  'token:read',
  'private',
  'expiring',
  'reveal',
  'module.exports = async (req) => req;',
  'while(true){}',
];
/** Raw JSON texts no JSON.stringify makes: duplicate keys, out-of-range numbers, bad escapes, deep nesting. */
export const NASTY_NUMBERS = ['1e999', '-1e999', '9007199254740993', '1.0', '1E2', '-0.0', '0x10', '1_000', '.5', '01', '123456789012345678901234567890'];
export const NASTY_QUERY = [
  '',
  '0',
  '-1',
  '1.5',
  '1e3',
  '2147483648',
  '9007199254740993',
  '9007199254740992',
  '1e308',
  'NaN',
  'Infinity',
  'null',
  'true',
  '%00',
  '%ZZ',
  '%',
  '%C0%AF',
  '%F0%9F',
  '%ED%A0%80',
  '+',
  '%20',
  'a%26b%3Dc',
  '__proto__',
  'x'.repeat(3000),
  '%E2%80%AE',
  '0x10',
  '2024-13-45T00:00:00Z',
  '1970-01-01T00:00:00Z',
  '%2B275760-09-13T00:00:00Z',
  'yesterday',
  'not-a-uuid',
  'private',
  'private,public',
  '00000000-0000-0000-0000-000000000000',
  'application',
  'json',
  'csv',
  'ndjson',
  '*',
  'pay*',
];
export const EXTRA_QUERY = [
  '__proto__=1',
  '__proto__[x]=1',
  'constructor[prototype][x]=1',
  'toString=1',
  'hasOwnProperty=1',
  'extra=1',
  'size[]=1',
  'size[a]=1',
  'page=1&page=2',
  'size=1&size=2',
  'id[]=x',
  'type[0]=private',
  'a[b][c][d][e][f][g]=1',
  `${'a'.repeat(200)}=1`,
  'svc-api-key=x',
  '=1',
  '&&&',
  'a=1&a=2&a=3&a=4&a=5&a=6&a=7&a=8&a=9&a=10',
];
export const ODD_IDS = [
  'not-a-uuid',
  '%00',
  '%ZZ',
  '..',
  '%2e%2e',
  '%2F',
  'x'.repeat(3000),
  '1',
  '-1',
  '9007199254740993',
  '__proto__',
  'constructor',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '%20',
  '%E2%80%AE',
  '%ED%A0%80',
  '%F0%9F%98%80',
  '7d0f4a8e-1c2b-4d3e-9f60-123456789abcd',
  '{7d0f4a8e-1c2b-4d3e-9f60-123456789abc}',
  '7d0f4a8e1c2b4d3e9f60123456789abc',
];

// ---------------------------------------------------------------------------------------------------------------
// Values from the document's schemas

export function resolve(document: Json, schema: Json): Json {
  let s = schema;
  while (s?.$ref)
    s = s.$ref
      .split('/')
      .slice(1)
      .reduce((o: Json, k: string) => o[k], document);
  return s ?? {};
}

/** A value meant to satisfy `schema` (formats and bounds included); contract rules beyond the schema may still refuse it. */
export function generate(document: Json, rng: Rng, schema: Json, depth = 0): unknown {
  const s = resolve(document, schema);
  if (s.anyOf) return generate(document, rng, rng.pick(s.anyOf), depth);
  if (s.enum) return rng.pick(s.enum);
  if (s.example !== undefined && rng.chance(0.7)) return s.example;
  const types: string[] = Array.isArray(s.type) ? s.type : [s.type ?? (s.properties ? 'object' : 'string')];
  const type = rng.chance(0.1) ? rng.pick(types) : (types.find((t) => t !== 'null') ?? 'null');
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return rng.chance(0.5);
    case 'integer': {
      const min = s.minimum ?? 0;
      const max = Math.min(s.maximum ?? 1000, min + 1000);
      return rng.pick([min, max, min + rng.int(max - min + 1)]);
    }
    case 'number':
      return rng.next() * 100;
    case 'array': {
      const n = depth > 3 ? 0 : rng.int(Math.min(s.maxItems ?? 3, 3) + 1);
      return Array.from({ length: n }, () => generate(document, rng, s.items ?? {}, depth + 1));
    }
    case 'object': {
      const out: Json = {};
      for (const [name, prop] of Object.entries<Json>(s.properties ?? {})) {
        if (s.required?.includes(name) || (depth < 3 && rng.chance(0.5))) out[name] = generate(document, rng, prop, depth + 1);
      }
      if (s.additionalProperties && depth < 3)
        for (let i = rng.int(3); i > 0; i--) out[`k${rng.int(1000)}`] = generate(document, rng, s.additionalProperties, depth + 1);
      return out;
    }
    default: {
      if (s.format === 'uuid') return randomUuidFrom(rng);
      if (s.format === 'date-time') return new Date(Date.now() + (rng.int(7200) - 3600) * 1000).toISOString();
      const max = s.maxLength ?? 40;
      return rng.pick(['x', 'name', 'a'.repeat(Math.max(1, max)), `n-${rng.int(1e9)}`, 'ünï ☃ 😀']).slice(0, max);
    }
  }
}

/** Every object schema without `additionalProperties` gets `additionalProperties: false`. */
export function closeObjects(node: any): any {
  if (Array.isArray(node)) node.forEach(closeObjects);
  else if (node && typeof node === 'object') {
    if (node.properties && node.additionalProperties === undefined) node.additionalProperties = false;
    for (const value of Object.values(node)) closeObjects(value);
  }
  return node;
}

/** Why a query string is outside its operation's parameters (unknown, repeated, wrong type, format, bounds), or undefined. */
export function queryOutsideSchema(document: Json, parameters: Json[], search: string): string | undefined {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(search);
    for (const name of params.keys()) decodeURIComponent(name);
    decodeURIComponent(search.replace(/\+/g, ' '));
  } catch {
    return 'a query string that does not decode';
  }
  const byName = new Map(parameters.filter((p) => p.in === 'query').map((p) => [p.name, resolve(document, p.schema ?? {})]));
  const seen = new Set<string>();
  for (const [name, value] of params) {
    const schema = byName.get(name);
    if (!schema) return `unknown query parameter ${JSON.stringify(name.slice(0, 40))}`;
    if (seen.has(name) && schema.type !== 'array') return `${name} repeated`;
    seen.add(name);
    const item = schema.type === 'array' ? resolve(document, schema.items ?? {}) : schema;
    if (item.enum && !item.enum.includes(value)) return `${name}=${value.slice(0, 40)} is not one of its values`;
    if (item.type === 'integer') {
      if (!/^[0-9]+$/.test(value)) return `${name}=${value.slice(0, 40)} is not an integer`;
      const n = Number(value);
      if ((item.minimum !== undefined && n < item.minimum) || (item.maximum !== undefined && n > item.maximum))
        return `${name}=${value.slice(0, 40)} is out of bounds`;
    }
    if (item.maxLength !== undefined && [...value].length > item.maxLength) return `${name} longer than ${item.maxLength}`;
    if (item.format === 'uuid' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return `${name} is not a uuid`;
  }
  return undefined;
}

export function randomUuidFrom(rng: Rng): string {
  const hex = () => rng.int(16).toString(16);
  const h = (n: number) => Array.from({ length: n }, hex).join('');
  return `${h(8)}-${h(4)}-4${h(3)}-${rng.pick(['8', '9', 'a', 'b'])}${h(3)}-${h(12)}`;
}

/** Every [path] to a value inside `value` (the root is []). */
export function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  return out;
}

export function setAt(root: unknown, path: (string | number)[], value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  const copy: any = structuredClone(root);
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  const last = path[path.length - 1]!;
  if (remove) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}
