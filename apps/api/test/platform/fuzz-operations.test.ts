import { gzipSync } from 'node:zlib';
import type { Response } from 'supertest';
import { answerClientErrors } from '../../src/http/client-errors';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { startUpstream, Upstream } from '@gatehouse/test-support/upstream';
import { as, Caller, createApplication, expectProblem, managementWith, newTenant, rowCounts, VALID } from '../support/application-fixtures';
import { Json, openApiChecker } from '../support/openapi-document';

/**
 * The generated fuzz tier: for every operation of apps/api/openapi.json, cases from a seeded PRNG (valid bodies from
 * the document's examples and schemas, then mutations of bodies, query strings, path ids, keys and content types).
 * Each case: no 5xx; a 4xx is ProblemDetails as documented and changed nothing (the tenant's row counts, the target
 * application and proxy rows); a 2xx validates against the documented schema, and what a write answered is what a
 * read returns afterwards. On the data plane (/proxy): odd methods, paths, headers and bodies never make a 500.
 *
 * FUZZ_CASES=N (total, spread over the operations; default sized for `npm test`), FUZZ_SEED=S (default fixed;
 * `random` picks one). A failure prints the seed, the case and the smallest request that still fails, to replay.
 */
const CASES = Number(process.env.FUZZ_CASES ?? 2500);
const SEED = process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 20260101);
const PROGRESS = process.env.FUZZ_PROGRESS === '1' || CASES > 5000;

jest.setTimeout(Math.max(120_000, CASES * 200));

// ---------------------------------------------------------------------------------------------------------------
// The PRNG and what it picks from

/** mulberry32: small, fast, good enough to spread cases; one stream per operation so a case replays by seed + name. */
function prng(seed: number) {
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
type Rng = ReturnType<typeof prng>;

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** JSON values a schema does not expect: boundaries, wrong types, odd strings. */
const NASTY_VALUES: unknown[] = [
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
const NASTY_NUMBERS = ['1e999', '-1e999', '9007199254740993', '1.0', '1E2', '-0.0', '0x10', '1_000', '.5', '01', '123456789012345678901234567890'];
const NASTY_QUERY = [
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
const EXTRA_QUERY = [
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
const ODD_IDS = [
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

function resolve(document: Json, schema: Json): Json {
  let s = schema;
  while (s?.$ref)
    s = s.$ref
      .split('/')
      .slice(1)
      .reduce((o: Json, k: string) => o[k], document);
  return s ?? {};
}

/** A value meant to satisfy `schema` (formats and bounds included); contract rules beyond the schema may still refuse it. */
function generate(document: Json, rng: Rng, schema: Json, depth = 0): unknown {
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
function closeObjects(node: any): any {
  if (Array.isArray(node)) node.forEach(closeObjects);
  else if (node && typeof node === 'object') {
    if (node.properties && node.additionalProperties === undefined) node.additionalProperties = false;
    for (const value of Object.values(node)) closeObjects(value);
  }
  return node;
}

/** Why a query string is outside its operation's parameters (unknown, repeated, wrong type, format, bounds), or undefined. */
function queryOutsideSchema(document: Json, parameters: Json[], search: string): string | undefined {
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

function randomUuidFrom(rng: Rng): string {
  const hex = () => rng.int(16).toString(16);
  const h = (n: number) => Array.from({ length: n }, hex).join('');
  return `${h(8)}-${h(4)}-4${h(3)}-${rng.pick(['8', '9', 'a', 'b'])}${h(3)}-${h(12)}`;
}

/** Every [path] to a value inside `value` (the root is []). */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown, remove = false): unknown {
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

// ---------------------------------------------------------------------------------------------------------------
// Cases

interface Case {
  method: string;
  /** The document's path template, e.g. /applications/{id}. */
  operation: string;
  /** The path and query string as sent. */
  url: string;
  headers: Record<string, string | string[]>;
  /** The raw body, if any. */
  body?: string | Buffer;
  /** What the generator did, for the report. */
  note: string;
}

interface Finding {
  signature: string;
  message: string;
  request: Case;
  status: number;
  response: string;
}

function describeCase(c: Case): string {
  const body =
    c.body === undefined
      ? ''
      : Buffer.isBuffer(c.body)
        ? `<bytes ${c.body.toString('hex').slice(0, 400)}>`
        : c.body.length > 600
          ? `${c.body.slice(0, 600)}… (${c.body.length} chars)`
          : c.body;
  const headers = Object.entries(c.headers)
    .map(([k, v]) => `${k}: ${JSON.stringify(v).slice(0, 120)}`)
    .join('\n  ');
  return `${c.method.toUpperCase()} ${c.url.length > 600 ? `${c.url.slice(0, 600)}… (${c.url.length} chars)` : c.url}\n  ${headers}\n  body: ${body}\n  (${c.note})`;
}

describe(`fuzzed operations of the OpenAPI document (seed ${SEED}, ${CASES} cases)`, () => {
  const checker = openApiChecker();
  const { document } = checker;
  /**
   * The request schemas with every object closed (the contract refuses unknown fields, the document leaves
   * `additionalProperties` open): input these refuse must not be acknowledged with a 2xx.
   */
  const strict = openApiChecker(closeObjects(structuredClone(document)));
  let t: TestApp;
  let upstream: Upstream;
  let admin: Caller;
  let other: Caller;
  /** SVC-API-KEY values, by what they are. */
  const keys: Record<string, string> = {};
  /** Ids for path parameters: this tenant's targets and another tenant's. */
  const ids: { application: string; proxy: string; otherApplication: string; otherProxy: string } = {} as never;
  const findings = new Map<string, Finding>();
  /** Answers by operation and status, to show what the cases reached (printed with FUZZ_PROGRESS). */
  const statuses = new Map<string, Map<number, number>>();
  const count = (operation: string, status: number) => {
    const byStatus = statuses.get(operation) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    statuses.set(operation, byStatus);
  };
  let sent = 0;
  const started = Date.now();

  const targetProxyBody = () => ({ name: 'fuzz target', destination_url: `${upstream.origin}/`, require_auth: false, configuration: { A: 'b' } });
  const targetApplicationBody = {
    ...VALID.private,
    name: 'fuzz target',
    rules: [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] }],
  };

  beforeAll(async () => {
    upstream = await startUpstream(async (req, res) => {
      for await (const _ of req); // drain
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, url: req.url }));
    });
    t = await startTestApp({ PROXY_ALLOW_HTTP: 'true', PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', REACTOR_POOL_SIZE: '1', AUTH_THROTTLE_LIMIT: '0' });
    // As main.ts does on the server it listens with: a head Node's parser refuses gets a problem body too.
    answerClientErrors(t.app.getHttpServer());
    admin = await newTenant(t);
    other = await newTenant(t);
    keys.admin = admin.key;
    keys.other = other.key;
    keys.weak = (await managementWith(t, admin, ['log:read'])).key;
    keys.private = (await createApplication(t, admin.key, { ...VALID.private, permissions: ['token:read'] })).key;
    keys.public = (await createApplication(t, admin.key, VALID.public)).key;
    // The token vault's operations need token permissions, which no management key holds.
    keys.vault = (
      await createApplication(t, admin.key, {
        name: 'fuzz vault',
        type: 'private',
        permissions: ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'],
        rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read', 'token:use'] }],
      })
    ).key;
    keys.expiring = (
      await createApplication(t, admin.key, {
        ...VALID.expiring,
        rules: [{ priority: 1, conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }], transform: 'reveal', permissions: ['token:read'] }],
      })
    ).key;
    keys.otherPrivate = (await createApplication(t, other.key, { ...VALID.private, permissions: ['token:read'] })).key;
    keys.otherExpiring = (
      await createApplication(t, other.key, {
        ...VALID.expiring,
        rules: [{ priority: 1, conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }], transform: 'reveal', permissions: ['token:read'] }],
      })
    ).key;
    const gone = await managementWith(t, admin, ['application:read']);
    await as(t, admin.key).delete(`/applications/${gone.id}`).expect(204);
    keys.deleted = gone.key;
    const proxy = (await as(t, admin.key).post('/proxies', targetProxyBody()).expect(201)).body;
    keys.proxy = proxy.key;
    ids.proxy = proxy.id;
    ids.application = (await createApplication(t, admin.key, targetApplicationBody)).id;
    ids.otherApplication = (await createApplication(t, other.key, VALID.private)).id;
    ids.otherProxy = (await as(t, other.key).post('/proxies', targetProxyBody()).expect(201)).body.id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await upstream?.stop();
    if (PROGRESS) {
      for (const [operation, byStatus] of statuses) {
        const line = [...byStatus]
          .sort(([a], [b]) => a - b)
          .map(([status, n]) => `${status}:${n}`)
          .join(' ');
        process.stderr.write(`fuzz: ${operation.padEnd(38)} ${line}\n`);
      }
    }
    if (PROGRESS || findings.size > 0)
      process.stderr.write(`fuzz: seed ${SEED}, ${sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s, ${findings.size} distinct findings\n`);
  });

  function keyHeader(rng: Rng, operation: string): { headers: Record<string, string | string[]>; note: string } {
    if (rng.chance(0.72)) {
      if (TOKEN_OPERATION.test(operation)) return { headers: { 'svc-api-key': keys.vault! }, note: 'vault key' };
      return { headers: { 'svc-api-key': keys.admin! }, note: 'admin key' };
    }
    const choice = rng.pick([
      'other',
      'otherPrivate',
      'otherExpiring',
      'weak',
      'private',
      'public',
      'expiring',
      'deleted',
      'proxy',
      'none',
      'empty',
      'short',
      'long',
      'padded',
      'lower',
      'suffixed',
      'latin1',
      'duplicate',
      'bearer',
      'proxy-header',
      'query',
    ]);
    switch (choice) {
      case 'none':
        return { headers: {}, note: 'no key' };
      case 'empty':
        return { headers: { 'svc-api-key': '' }, note: 'empty key' };
      case 'short':
        return { headers: { 'svc-api-key': 'x' }, note: 'one-character key' };
      case 'long':
        return { headers: { 'svc-api-key': 'A'.repeat(rng.pick([32, 64, 4096])) }, note: 'long unknown key' };
      case 'padded':
        return { headers: { 'svc-api-key': ` ${keys.admin}\t` }, note: 'admin key with whitespace' };
      case 'lower':
        return { headers: { 'svc-api-key': keys.admin!.toLowerCase() }, note: 'admin key lower-cased' };
      case 'suffixed':
        return { headers: { 'svc-api-key': `${keys.admin}x` }, note: 'admin key plus a character' };
      case 'latin1':
        return { headers: { 'svc-api-key': Buffer.from('clé\xff', 'latin1').toString('latin1') }, note: 'latin-1 key' };
      case 'duplicate':
        return { headers: { 'svc-api-key': [keys.admin!, keys.other!] }, note: 'two SVC-API-KEY headers' };
      case 'bearer':
        return { headers: { authorization: `Bearer ${keys.admin}` }, note: 'key as a bearer token' };
      case 'proxy-header':
        return { headers: { 'svc-proxy-key': keys.proxy! }, note: 'SVC-PROXY-KEY on an API route' };
      case 'query':
        return { headers: {}, note: 'key in the query string' };
      default:
        return { headers: { 'svc-api-key': keys[choice]! }, note: `${choice} key` };
    }
  }

  function pathId(rng: Rng, operation: string): { id: string; note: string } {
    const own = operation.startsWith('/proxies') ? ids.proxy : ids.application;
    const others = operation.startsWith('/proxies') ? ids.otherProxy : ids.otherApplication;
    if (rng.chance(0.6)) return { id: own, note: 'target id' };
    return rng.pick([
      { id: others, note: "another tenant's id" },
      { id: randomUuidFrom(rng), note: 'unknown uuid' },
      { id: own.toUpperCase(), note: 'target id upper-cased' },
      { id: operation.startsWith('/proxies') ? ids.application : ids.proxy, note: 'an id of the other kind' },
      { id: rng.pick(ODD_IDS), note: 'odd id' },
      { id: rng.pick(ODD_IDS), note: 'odd id' },
    ]);
  }

  function query(rng: Rng, parameters: Json[]): { query: string; note: string } {
    const parts: string[] = [];
    const notes: string[] = [];
    for (const p of parameters.filter((x) => x.in === 'query')) {
      if (!rng.chance(0.4)) continue;
      const schema = resolve(document, p.schema ?? {});
      const repeat = schema.type === 'array' ? 1 + rng.int(3) : rng.chance(0.05) ? 2 : 1;
      for (let i = 0; i < repeat; i++) {
        if (rng.chance(0.7)) {
          const v = generate(document, rng, schema.type === 'array' ? schema.items : schema);
          parts.push(`${p.name}=${encodeURIComponent(String(v))}`);
        } else {
          parts.push(`${p.name}=${rng.pick(NASTY_QUERY)}`);
          notes.push(`odd ${p.name}`);
        }
      }
    }
    if (rng.chance(0.15)) {
      const extra = rng.pick(EXTRA_QUERY);
      parts.push(extra);
      notes.push(`extra ${extra.slice(0, 40)}`);
    }
    if (rng.chance(0.02)) {
      parts.push(`start=${'A'.repeat(rng.pick([5000, 12000]))}`);
      notes.push('very long query string');
    }
    return { query: parts.length ? `?${parts.join('&')}` : '', note: notes.join(', ') };
  }

  /** A body for an operation: a valid one (an example, or one made from the schema), then perhaps one mutation. */
  function body(rng: Rng, method: string, operation: string): { body?: string | Buffer; type?: string; coding?: string; note: string } {
    const requestBody = document.paths[operation][method].requestBody;
    if (!requestBody) return rng.chance(0.05) ? { body: '{"a":1}', type: 'application/json', note: 'a body where none is expected' } : { note: '' };
    const [media] = Object.keys(requestBody.content);
    const content = requestBody.content[media!];
    const examples = Object.values<Json>(content.examples ?? {});
    let value: unknown = examples.length && rng.chance(0.4) ? structuredClone(rng.pick(examples).value) : generate(document, rng, content.schema);
    let note = 'valid body';
    const notes: string[] = [];
    const mutations = rng.chance(0.2) ? 0 : 1 + (rng.chance(0.3) ? rng.int(3) : 0);
    let raw: string | Buffer | undefined;
    for (let m = 0; m < mutations; m++) {
      const targets = paths(value);
      const at = rng.pick(targets);
      switch (rng.int(9)) {
        case 0:
        case 1:
        case 2: {
          const nasty = rng.pick(NASTY_VALUES);
          value = setAt(value, at, nasty);
          notes.push(`${at.join('.') || 'body'} = ${JSON.stringify(nasty)?.slice(0, 40)}`);
          break;
        }
        case 3:
          if (at.length) {
            value = setAt(value, at, undefined, true);
            notes.push(`without ${at.join('.')}`);
          }
          break;
        case 4: {
          const container = paths(value).filter((p) => {
            const v = p.reduce((o: any, k) => o?.[k], value);
            return v && typeof v === 'object' && !Array.isArray(v);
          });
          if (container.length) {
            const where = rng.pick(container);
            const name = rng.pick(['extra', '__proto__', 'constructor', 'toString', 'prototype', 'ünï', '', 'name ', 'NAME', 'type']);
            value = setAt(value, [...where, name], rng.pick(NASTY_VALUES));
            notes.push(`extra field ${JSON.stringify(name)} at ${where.join('.') || 'top'}`);
          }
          break;
        }
        case 5: {
          // Wrap a value in an array, or an array element in an object: arrays where objects go and back.
          const v = at.reduce((o: any, k) => o?.[k], value);
          value = setAt(value, at, rng.chance(0.5) ? [v] : { value: v });
          notes.push(`${at.join('.') || 'body'} wrapped`);
          break;
        }
        case 6: {
          const depth = rng.pick([50, 500, 5000]);
          const nested = rng.chance(0.5) ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
          raw = rng.chance(0.5) ? nested : JSON.stringify(value).replace(/}$/, `,"deep":${nested}}`);
          notes.push(`nesting ${depth} deep`);
          break;
        }
        default: {
          // Raw texts: duplicate keys, numbers JSON.stringify never writes, bad escapes, bytes that are not UTF-8.
          const text = JSON.stringify(value) ?? 'null';
          const field = at.length ? String(at[at.length - 1]) : 'name';
          const kind = rng.int(6);
          if (kind === 0 && text.endsWith('}')) {
            raw = `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}${JSON.stringify(field)}:${JSON.stringify(rng.pick(NASTY_VALUES))}}`;
            notes.push(`duplicate key ${field}`);
          } else if (kind === 1 && text.endsWith('}')) {
            raw = `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}${JSON.stringify(field)}:${rng.pick(NASTY_NUMBERS)}}`;
            notes.push(`raw number for ${field}`);
          } else if (kind === 2) {
            raw = text.replace(/"([^"\\]*)"(?=[,}\]])/, `"$1${rng.pick(['\\ud800', '\\udfff\\ud800', '\\u0000', '\\x41', '\\', '\\u12', '\u0001'])}"`);
            notes.push('an odd escape in a string');
          } else if (kind === 3) {
            raw = Buffer.concat([
              Buffer.from(text.slice(0, Math.max(1, text.length - 2))),
              Buffer.from(rng.pick([[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf0, 0x9f]])),
              Buffer.from(text.slice(-2)),
            ]);
            notes.push('bytes that are not UTF-8');
          } else if (kind === 4) {
            raw = rng.pick([`\ufeff${text}`, `${text}${text}`, text.slice(0, text.length >> 1), ` ${text} `, `${text}\u0000`, '']);
            notes.push('text around the document');
          } else {
            raw = rng.pick(['[]', 'null', '"x"', '42', 'true', '[{}]', JSON.stringify([value])]);
            notes.push('not an object at the top');
          }
          break;
        }
      }
    }
    if (notes.length) note = notes.join('; ');
    let type = media === '*/*' ? 'application/json' : media;
    if (rng.chance(0.05)) {
      type = rng.pick([
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=latin1',
        'application/merge-patch+json',
        'application/json',
        'APPLICATION/JSON',
        'application/jsonx',
        '',
      ]);
      note += `; content-type ${JSON.stringify(type)}`;
    }
    if (raw === undefined) raw = JSON.stringify(value) ?? '';
    if (rng.chance(0.03)) {
      // A content coding: the body inflated before it is read, or refused (415 unknown coding, 400 bad data).
      const coding = rng.pick(['gzip', 'deflate', 'br', 'identity', 'x-unknown', 'gzip, gzip']);
      const compress = coding === 'gzip' && rng.chance(0.6);
      return { body: compress ? gzipSync(raw) : raw, type, coding, note: `${note}; content-encoding ${coding}${compress ? ' (gzipped)' : ''}` };
    }
    if (rng.chance(0.01)) {
      raw = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
      note = 'a 2 MiB body';
    }
    return { body: raw, type, note };
  }

  /** The token vault's operations, which the vault key (not the admin key) is allowed. */
  const TOKEN_OPERATION = /^\/(tokens|v2\/tokens|tokenize|detokenize)(\/|$)/;

  function makeCase(rng: Rng, method: string, operation: string): Case {
    const op = document.paths[operation][method];
    const notes: string[] = [];
    const key = keyHeader(rng, operation);
    notes.push(key.note);
    let url = operation;
    if (operation.includes('{id}')) {
      const id = pathId(rng, operation);
      url = url.replace('{id}', id.id);
      if (id.note !== 'target id') notes.push(id.note);
    }
    const q = query(rng, op.parameters ?? []);
    url += q.query;
    if (q.note) notes.push(q.note);
    if (key.note === 'key in the query string') url += `${url.includes('?') ? '&' : '?'}svc-api-key=${keys.admin}`;
    const b = body(rng, method, operation);
    // A parameter both the query and the body can carry (previous_key_expires_in_seconds) is usually given once:
    // generated independently, the two would nearly always disagree (a 400) and the 2xx path would go untried.
    if (typeof b.body === 'string' && url.includes('?') && rng.chance(0.8)) {
      let members: string[] = [];
      try {
        const parsed = JSON.parse(b.body);
        if (parsed && typeof parsed === 'object') members = Object.keys(parsed);
      } catch {
        members = [];
      }
      const [path, search] = url.split('?') as [string, string];
      const kept = search.split('&').filter((pair) => !members.includes(pair.split('=')[0]!));
      url = kept.length ? `${path}?${kept.join('&')}` : path;
    }
    const headers = { ...key.headers };
    if (b.type) headers['content-type'] = b.type;
    if (b.coding) headers['content-encoding'] = b.coding;
    if (rng.chance(0.03)) {
      headers.accept = rng.pick(['application/xml', 'text/html', '*/*;q=0', 'application/problem+json', 'application/json;q=x', '']);
      notes.push(`accept ${JSON.stringify(headers.accept)}`);
    }
    if (b.note) notes.push(b.note);
    return { method, operation, url, headers, body: b.body, note: notes.join('; ') };
  }

  async function send(c: Case): Promise<Response> {
    let req = (t.http() as any)[c.method](c.url) as import('supertest').Test;
    for (const [k, v] of Object.entries(c.headers)) req = req.set(k, v as string);
    // The bytes as generated: superagent would otherwise serialise a Buffer as JSON ({"type":"Buffer",...}) for a JSON type.
    if (c.body !== undefined && c.body !== '') req = req.serialize((x: unknown) => x as string).send(Buffer.isBuffer(c.body) ? c.body : Buffer.from(c.body));
    return req.timeout(15_000);
  }

  async function snapshot() {
    const [application] = await t.database.dataSource.query('SELECT * FROM applications WHERE id = $1', [ids.application]);
    const [proxy] = await t.database.dataSource.query('SELECT * FROM proxies WHERE id = $1', [ids.proxy]);
    const [otherApplication] = await t.database.dataSource.query('SELECT * FROM applications WHERE id = $1', [ids.otherApplication]);
    const [otherProxy] = await t.database.dataSource.query('SELECT * FROM proxies WHERE id = $1', [ids.otherProxy]);
    return JSON.stringify({
      own: await rowCounts(t, admin.tenantId),
      other: await rowCounts(t, other.tenantId),
      application,
      proxy,
      otherApplication,
      otherProxy,
    });
  }

  /** Runs one case; returns what is wrong with the answer (undefined if nothing). */
  async function check(c: Case): Promise<{ problem?: string; res?: Response }> {
    const before = await snapshot();
    let res: Response;
    try {
      res = await send(c);
    } catch (error) {
      return { problem: `no answer: ${(error as Error).message}` };
    } finally {
      sent++;
    }
    const method = c.method;
    try {
      if (res.status >= 500) return { problem: `a ${res.status}`, res };
      checker.conforms(method, c.operation, res);
      if (res.status >= 400) {
        expectProblem(res, res.status);
        const after = await snapshot();
        if (after !== before) return { problem: `state changed on a ${res.status}`, res };
      } else {
        const outside = outsideSchema(c);
        if (outside) return { problem: `a ${res.status} for input the document refuses: ${outside}`, res };
        await afterSuccess(c, res);
      }
    } catch (error) {
      const message = (error as Error).message.split('\n')[0]!.replace(/\s+/g, ' ');
      return { problem: message, res };
    }
    return { res };
  }

  /** Why the request is outside what the document accepts (query and JSON body), or undefined if it is within or unclear. */
  function outsideSchema(c: Case): string | undefined {
    const op = document.paths[c.operation][c.method];
    const search = c.url.includes('?') ? c.url.slice(c.url.indexOf('?') + 1) : '';
    const parameters = (op.parameters ?? []).concat([{ name: 'svc-api-key', in: 'query', schema: { type: 'string' } }]);
    const query = queryOutsideSchema(document, parameters, search);
    if (query) return query;
    const requestBody = op.requestBody;
    if (!requestBody || c.body === undefined || c.body === '' || Buffer.isBuffer(c.body)) return undefined;
    const [media] = Object.keys(requestBody.content);
    if (String(c.headers['content-type'] ?? '') !== media) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(c.body.replace(/^\ufeff/, '')); // docs/security.md (strict input): a leading byte order mark is ignored
    } catch {
      return 'a body that is not JSON';
    }
    const validate = strict.validatorAt(['paths', c.operation, c.method, 'requestBody', 'content', media!, 'schema']);
    if (!validate(value)) return strict.ajv.errorsText(validate.errors).slice(0, 200);
    return undefined;
  }

  /** A write's answer is what a read returns; the targets a delete removed come back for the next cases. */
  async function afterSuccess(c: Case, res: Response): Promise<void> {
    const api = as(t, admin.key);
    if (
      c.headers['svc-api-key'] === keys.admin &&
      ['post', 'put', 'patch'].includes(c.method) &&
      (c.operation === '/applications' || c.operation === '/applications/{id}' || c.operation.startsWith('/proxies'))
    ) {
      const base = c.operation.startsWith('/proxies') ? '/proxies' : '/applications';
      const read = await api.get(`${base}/${res.body.id}`);
      if (read.status !== 200) throw new Error(`read back after ${c.method} answered ${read.status}`);
      const { key: _k1, ...written } = res.body;
      const { key: _k2, ...stored } = read.body;
      // Spec 2.4: a proxy's create answer has no modified_at; every other answer of a proxy does.
      if (c.operation === '/proxies') delete stored.modified_at;
      // A configuration is a map: its members come back from jsonb in jsonb's order (shorter names first).
      for (const body of [written, stored])
        if (body.configuration) body.configuration = Object.fromEntries(Object.entries(body.configuration).sort(([a], [b]) => (a < b ? -1 : 1)));
      const differs = [...new Set([...Object.keys(written), ...Object.keys(stored)])].filter((k) => JSON.stringify(written[k]) !== JSON.stringify(stored[k]));
      if (differs.length)
        throw new Error(
          `read back differs from what ${c.method} answered in ${differs.map((k) => `${k}: wrote ${JSON.stringify(written[k])?.slice(0, 120)} read ${JSON.stringify(stored[k])?.slice(0, 120)}`).join('; ')}`,
        );
    }
    if (c.method === 'delete' && res.status === 204) {
      if (c.url.startsWith(`/applications/${ids.application}`)) ids.application = (await createApplication(t, admin.key, targetApplicationBody)).id;
      if (c.url.startsWith(`/proxies/${ids.proxy}`)) ids.proxy = (await api.post('/proxies', targetProxyBody()).expect(201)).body.id;
    }
  }

  /** The smallest request that still fails the same way: query parameters, body members and the key taken out greedily. */
  async function shrink(c: Case, problem: string): Promise<Case> {
    let best = c;
    const same = async (candidate: Case) => (await check(candidate)).problem === problem;
    const [path, queryString] = best.url.split(/\?(.*)/s) as [string, string | undefined];
    let params = queryString ? queryString.split('&') : [];
    for (let i = params.length - 1; i >= 0; i--) {
      const fewer = params.filter((_, j) => j !== i);
      const candidate = { ...best, url: fewer.length ? `${path}?${fewer.join('&')}` : path };
      if (await same(candidate)) {
        best = candidate;
        params = fewer;
      }
    }
    const text = best.body;
    if (typeof text === 'string') {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        for (const name of Object.keys(value)) {
          const fewer = { ...(value as Json) };
          delete fewer[name];
          const candidate = { ...best, body: JSON.stringify(fewer) };
          // Only bodies JSON.stringify wrote: a raw text (duplicate keys, odd numbers) is kept as it is.
          if (JSON.stringify(JSON.parse(text)) === text && (await same(candidate))) {
            best = candidate;
            value = fewer;
          }
        }
      }
    }
    if (best.headers['svc-api-key'] !== keys.admin) {
      const candidate = { ...best, headers: { ...best.headers, 'svc-api-key': keys.admin! } };
      if (await same(candidate)) best = candidate;
    }
    return best;
  }

  const operations: [string, string][] = [];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    if (path.startsWith('/proxy') && !path.startsWith('/proxies')) continue; // the data plane: its own test below
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) if (item[method]) operations.push([method, path]);
  }
  const perOperation = Math.max(5, Math.ceil((CASES * 0.85) / operations.length));

  it.each(operations)(`%s %s: ${perOperation} generated cases, no 5xx, 4xx ProblemDetails changing nothing, 2xx as documented`, async (method, operation) => {
    const rng = prng(SEED ^ hash(`${method} ${operation}`));
    const local: string[] = [];
    for (let i = 0; i < perOperation; i++) {
      const c = makeCase(rng, method, operation);
      const { problem, res } = await check(c);
      count(`${method.toUpperCase()} ${operation}`, res?.status ?? 0);
      if (process.env.FUZZ_DEBUG && c.note.includes('valid body') && res && res.status >= 400)
        process.stderr.write(`${c.note} ${c.body} -> ${res.status} ${res.text.slice(0, 300)}\n`);
      if (PROGRESS && sent % 1000 === 0)
        process.stderr.write(`fuzz: ${sent} requests, ${((Date.now() - started) / 1000).toFixed(0)} s, ${findings.size} distinct findings\n`);
      if (!problem) continue;
      const signature = `${method.toUpperCase()} ${operation}: ${problem
        .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<uuid>')
        .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
        .replace(/in (\w+): wrote .*/, 'in $1')
        .slice(0, 160)}`;
      if (findings.has(signature)) continue;
      const minimal = await shrink(c, problem);
      const finding = { signature, message: problem, request: minimal, status: res?.status ?? 0, response: (res?.text ?? '').slice(0, 500) };
      findings.set(signature, finding);
      local.push(`case ${i} (FUZZ_SEED=${SEED}): ${problem}\n  ${describeCase(minimal)}\n  answered ${finding.status}: ${finding.response}`);
    }
    if (local.length) throw new Error(`${local.length} distinct findings:\n${local.join('\n\n')}`);
  });

  it('methods the document does not list for a path are a 4xx ProblemDetails that changes nothing', async () => {
    const local: string[] = [];
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      if (path.startsWith('/proxy') && !path.startsWith('/proxies')) continue;
      for (const method of ['get', 'post', 'put', 'patch', 'delete', 'options', 'head', 'propfind', 'search', 'purge']) {
        if (item[method] || (method === 'head' && item.get)) continue; // HEAD is GET without the body (RFC 9110 9.3.2)
        const url = path.replace('{id}', path.startsWith('/proxies') ? ids.proxy : ids.application);
        const c: Case = {
          method,
          operation: path,
          url,
          headers: { 'svc-api-key': keys.admin!, 'content-type': 'application/json' },
          body: method === 'get' || method === 'head' ? undefined : '{"name":"x"}',
          note: 'undocumented method',
        };
        const before = await snapshot();
        const res = await send(c);
        sent++;
        count(`${method.toUpperCase()} ${path} (undocumented)`, res.status);
        let problem: string | undefined;
        if (res.status < 400 || res.status >= 500) problem = `a ${res.status}`;
        else if (method !== 'head') {
          try {
            expectProblem(res, res.status);
          } catch (error) {
            problem = (error as Error).message.split('\n')[0];
          }
        }
        if (!problem && (await snapshot()) !== before) problem = `state changed on a ${res.status}`;
        if (problem) local.push(`${problem}\n  ${describeCase(c)}\n  answered ${res.status}: ${res.text?.slice(0, 300)}`);
      }
    }
    if (local.length) throw new Error(`${local.length} findings:\n${local.join('\n\n')}`);
  });

  // ---------------------------------------------------------------------------------------------------------------
  // The data plane: /proxy with SVC-PROXY-KEY, odd methods, paths, headers and bodies

  it(`/proxy: ${Math.max(20, Math.ceil(CASES * 0.15))} generated invocations never answer a 500 or hang`, async () => {
    const rng = prng(SEED ^ hash('/proxy'));
    const api = as(t, admin.key);
    const proxies = {
      open: (await api.post('/proxies', { name: 'open', destination_url: `${upstream.origin}/base/`, require_auth: false }).expect(201)).body.key,
      guarded: (await api.post('/proxies', { name: 'guarded', destination_url: `${upstream.origin}/` }).expect(201)).body.key,
      transformed: (
        await api
          .post('/proxies', {
            name: 'transformed',
            destination_url: `${upstream.origin}/`,
            require_auth: false,
            request_transform: { code: 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });' },
            response_transform: { code: 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });' },
          })
          .expect(201)
      ).body.key,
    } as Record<string, string>;
    const methods = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head', 'propfind', 'search', 'lock', 'purge', 'mkcol', 'report', 'merge'];
    const local: string[] = [];
    const total = Math.max(20, Math.ceil(CASES * 0.15));
    for (let i = 0; i < total; i++) {
      const method = rng.pick(methods);
      const headers: Record<string, string | string[]> = {};
      const which = rng.pick(Object.keys(proxies));
      const keyChoice = rng.int(10);
      let url = rng.pick([
        '/proxy',
        '/proxy/',
        `/proxy/${rng.pick(['a/b', '%2e%2e/%2e%2e/etc', '..%2f..%2f', '%00', '%ZZ', 'a'.repeat(3000), '😀', '%F0%9F', '..', '.', '//x', 'a;b=c', 'a?b', '%3F%23', '~', '%5C..%5C'])}`,
      ]);
      if (rng.chance(0.3))
        url += `?${rng.pick(EXTRA_QUERY)}&${rng.pick(['x=1', 'svc-proxy-key=', `svc-proxy-key=${proxies[which]}`, `q=${rng.pick(NASTY_QUERY)}`])}`;
      if (keyChoice < 6) headers['svc-proxy-key'] = proxies[which]!;
      else if (keyChoice === 6) headers['svc-proxy-key'] = rng.pick(['', 'x', 'A'.repeat(32), 'A'.repeat(5000), keys.admin!, `${proxies[which]} `]);
      else if (keyChoice === 7) headers['svc-proxy-key'] = [proxies[which]!, proxies.open!];
      if (which === 'guarded' || rng.chance(0.2)) headers['svc-api-key'] = rng.pick([keys.admin!, keys.private!, keys.public!, keys.other!, keys.weak!, 'x']);
      if (rng.chance(0.3)) {
        const odd = rng.pick<[string, string]>([
          // No Transfer-Encoding: a framing Node's parser refuses or waits on is client-errors.test.ts's (raw sockets).
          ['host', 'evil.example'],
          ['x-forwarded-for', '1.2.3.4, ::1'],
          ['connection', 'upgrade'],
          ['upgrade', 'websocket'],
          ['te', 'trailers'],
          ['content-encoding', 'gzip'],
          ['x-a', 'ü\xff'],
          ['accept', '*/*;q=x'],
          ['cookie', 'a=1; svc-api-key=x'],
          ['authorization', 'Basic ' + 'A'.repeat(4000)],
          ['x-http-method-override', 'DELETE'],
          ['range', 'bytes=0-0,5-1'],
        ]);
        headers[odd[0]] = odd[1];
      }
      let bodyText: string | Buffer | undefined;
      if (['post', 'put', 'patch', 'delete', 'propfind', 'search', 'report'].includes(method) && rng.chance(0.8)) {
        const kind = rng.int(5);
        bodyText =
          kind === 0
            ? JSON.stringify({ a: rng.pick(NASTY_VALUES) })
            : kind === 1
              ? Buffer.from([0xff, 0xfe, 0x00, 0xc0])
              : kind === 2
                ? '{"a":'
                : kind === 3
                  ? 'x'.repeat(rng.pick([0, 10, 200_000, 2_000_000]))
                  : '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]';
        headers['content-type'] = rng.pick([
          'application/json',
          'text/plain',
          'application/octet-stream',
          'application/x-www-form-urlencoded',
          'multipart/form-data',
          '',
          'application/json; charset=utf-16',
        ]);
      }
      const c: Case = { method, operation: '/proxy', url, headers, body: bodyText, note: `${which} proxy` };
      let res: Response | undefined;
      let problem: string | undefined;
      try {
        res = await send(c);
        sent++;
        count(`${method.toUpperCase()} /proxy`, res.status);
        if (res.status === 500) problem = 'a 500';
        else if (res.status >= 400 && res.status !== 502 && !String(res.headers['content-type']).startsWith('application/problem+json'))
          problem = `a ${res.status} that is not ProblemDetails`;
      } catch (error) {
        problem = `no answer: ${(error as Error).message}`;
      }
      if (!problem) continue;
      const signature = `${method.toUpperCase()} /proxy: ${problem}`;
      if (findings.has(signature)) continue;
      findings.set(signature, { signature, message: problem, request: c, status: res?.status ?? 0, response: (res?.text ?? '').slice(0, 500) });
      local.push(`case ${i} (FUZZ_SEED=${SEED}): ${problem}\n  ${describeCase(c)}\n  answered ${res?.status}: ${(res?.text ?? '').slice(0, 500)}`);
    }
    if (local.length) throw new Error(`${local.length} distinct findings:\n${local.join('\n\n')}`);
  });
});
