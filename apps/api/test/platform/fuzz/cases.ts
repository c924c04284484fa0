import { gzipSync } from 'node:zlib';
import { VALID } from '../../support/application-fixtures';
import type { Json } from '../../support/openapi-document';
import { EXTRA_QUERY, generate, NASTY_NUMBERS, NASTY_QUERY, NASTY_VALUES, ODD_IDS, paths, randomUuidFrom, resolve, type Rng, setAt } from './generators';

/**
 * The fuzz tier's cases (../fuzz-operations.test.ts): one request per case, built from the seeded PRNG. The draws are
 * made in a fixed order, so a seed and an operation replay the same cases.
 */

/** Ids for path parameters: this tenant's targets and another tenant's (a delete of a target replaces it). */
export interface TargetIds {
  application: string;
  proxy: string;
  otherApplication: string;
  otherProxy: string;
}

/** What the case builders read: the document, the SVC-API-KEY values by what they are, and the target ids as they are now. */
export interface CaseContext {
  document: Json;
  keys: Record<string, string>;
  ids: TargetIds;
}

/** One generated request. */
export interface Case {
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

/** A distinct failure (by signature): the case that showed it, shrunk, and the answer. */
export interface Finding {
  signature: string;
  message: string;
  request: Case;
  status: number;
  response: string;
}

/** A case as a report prints it (long urls and bodies cut). */
export function describeCase(c: Case): string {
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

/** The targets the cases aim at (and recreate after a delete): a proxy to the upstream, an application with a rule. */
export const targetProxyBody = (origin: string) => ({ name: 'fuzz target', destination_url: `${origin}/`, require_auth: false, configuration: { A: 'b' } });
export const TARGET_APPLICATION_BODY = {
  ...VALID.private,
  name: 'fuzz target',
  rules: [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] }],
};

/** The token vault's operations, which the vault key (not the admin key) is allowed. */
const TOKEN_OPERATION = /^\/(tokens|v2\/tokens|tokenize|detokenize)(\/|$)/;

function keyHeader(keys: Record<string, string>, rng: Rng, operation: string): { headers: Record<string, string | string[]>; note: string } {
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

function pathId(ids: TargetIds, rng: Rng, operation: string): { id: string; note: string } {
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

function query(document: Json, rng: Rng, parameters: Json[]): { query: string; note: string } {
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
function body(document: Json, rng: Rng, method: string, operation: string): { body?: string | Buffer; type?: string; coding?: string; note: string } {
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

export function makeCase(ctx: CaseContext, rng: Rng, method: string, operation: string): Case {
  const { document, keys, ids } = ctx;
  const op = document.paths[operation][method];
  const notes: string[] = [];
  const key = keyHeader(keys, rng, operation);
  notes.push(key.note);
  let url = operation;
  if (operation.includes('{id}')) {
    const id = pathId(ids, rng, operation);
    url = url.replace('{id}', id.id);
    if (id.note !== 'target id') notes.push(id.note);
  }
  const q = query(document, rng, op.parameters ?? []);
  url += q.query;
  if (q.note) notes.push(q.note);
  if (key.note === 'key in the query string') url += `${url.includes('?') ? '&' : '?'}svc-api-key=${keys.admin}`;
  const b = body(document, rng, method, operation);
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

/** Methods tried on the data plane, documented or not. */
const PROXY_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head', 'propfind', 'search', 'lock', 'purge', 'mkcol', 'report', 'merge'];

/** One invocation of the data plane (/proxy): odd methods, paths, keys, headers and bodies, aimed at one of `proxies` (their keys by name). */
export function makeProxyCase(keys: Record<string, string>, rng: Rng, proxies: Record<string, string>): Case {
  const method = rng.pick(PROXY_METHODS);
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
  return { method, operation: '/proxy', url, headers, body: bodyText, note: `${which} proxy` };
}
