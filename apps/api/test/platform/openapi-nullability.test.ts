import type { Response } from 'supertest';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { appWithTenant, Caller, createApplication } from '../support/application-fixtures';
import { Json, openApiDocument } from '../support/openapi-document';

const DOCUMENTED = ['get', 'put', 'post', 'delete', 'patch'];
// Placeholders the document's paths use for the id of the resource their collection creates.
const COLLECTION_OF: Record<string, string> = { '/applications/{id}': '/applications', '/proxies/{id}': '/proxies', '/tokens/{id}': '/tokens' };

/**
 * What the OpenAPI document says about null and about dates is what the API does, for every field the document has:
 * - a request member the document declares nullable is taken as null (never a 400 naming it), and one it does not
 *   declare nullable is a 400 naming it when sent as null; the same one level down (an object member's members, a
 *   map's values);
 * - a parameter or member of `format: date-time` takes an RFC 3339 date-time and refuses a date alone or a time
 *   without an offset; one that also admits `format: date` (anyOf) takes a date alone too.
 * Clients generated from the document therefore send nothing the API refuses, and are refused nothing they were told
 * they may send.
 */
describe('the OpenAPI document and the API agree on null and on dates', () => {
  const document = openApiDocument();
  let t: TestApp;
  let admin: Caller;
  let tokenKey: string;
  beforeAll(async () => {
    ({ t, admin } = await appWithTenant());
    tokenKey = (
      await createApplication(t, admin.key, { name: 'tokens', type: 'private', permissions: ['token:create', 'token:read', 'token:update', 'token:delete'] })
    ).key;
  }, 60_000);
  afterAll(() => t?.close());

  const keyFor = (path: string) => (path.startsWith('/tokens') ? tokenKey : admin.key);

  function resolve(schema: Json | undefined): Json {
    let at = schema ?? {};
    for (let i = 0; i < 10 && at.$ref; i++)
      at = at.$ref
        .slice(2)
        .split('/')
        .reduce((node: Json, key: string) => node[key], document);
    return at;
  }
  const isNullable = (schema: Json) =>
    (Array.isArray(schema.type) && schema.type.includes('null')) || (schema.anyOf ?? []).some((s: Json) => s.type === 'null');
  /** The schema without its null branch (`anyOf: [X, null]` -> X). */
  const nonNull = (schema: Json): Json => resolve(schema.anyOf ? schema.anyOf.find((s: Json) => s.type !== 'null') : schema);

  interface Operation {
    method: string;
    path: string;
    mediaType: string;
    schema: Json;
    example: Json;
  }
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    if (path === '/proxy' || path.startsWith('/proxy/')) continue;
    for (const method of DOCUMENTED) {
      const body = item[method]?.requestBody?.content;
      if (!body) continue;
      const mediaType = Object.keys(body)[0]!;
      const example = Object.values<Json>(body[mediaType].examples ?? {})[0]?.value;
      const schema = resolve(body[mediaType].schema);
      if (schema.type === 'object' && schema.properties && example) operations.push({ method, path, mediaType, schema, example });
    }
  }

  /** A fresh resource for a `{id}` path (its collection's first example), so each case starts from the same state. */
  async function concrete(path: string): Promise<string> {
    const collection = Object.entries(COLLECTION_OF).find(([template]) => path.startsWith(template))?.[1];
    if (!collection) return path;
    const example = Object.values<Json>(document.paths[collection].post.requestBody.content['application/json'].examples)[0]!.value;
    const created = await t.http().post(collection).set('SVC-API-KEY', keyFor(path)).send(example);
    if (created.status !== 201) throw new Error(`${collection}: ${created.status} ${created.text}`);
    return path.replace('{id}', created.body.id);
  }

  async function send(op: Operation, body: Json): Promise<Response> {
    const path = await concrete(op.path);
    return (t.http() as unknown as Record<string, (url: string) => import('supertest').Test>)[op.method]!(path)
      .set('SVC-API-KEY', keyFor(op.path))
      .set('Content-Type', op.mediaType)
      .send(JSON.stringify(body));
  }

  const names = (res: Response, field: string) =>
    res.status === 400 && Object.keys(res.body.errors ?? {}).some((k) => k === field || k.startsWith(`${field}.`) || k.startsWith(`${field}[`));

  /** `body` without the member `field` names (`a` or `a.b`). */
  function without(body: Json, field: string): Json {
    const [name, sub] = field.split('.') as [string, string | undefined];
    const { [name]: member, ...rest } = body;
    if (sub === undefined) return rest;
    const { [sub]: _, ...inner } = member as Json;
    return { ...rest, [name]: inner };
  }

  /** Every (body, field, nullable) case of an operation: its members, its object members' members, its maps' values. */
  function nullCases(op: Operation): { field: string; body: Json; nullable: boolean }[] {
    const cases: { field: string; body: Json; nullable: boolean }[] = [];
    for (const [name, raw] of Object.entries<Json>(op.schema.properties)) {
      const member = resolve(raw);
      cases.push({ field: name, body: { ...op.example, [name]: null }, nullable: isNullable(raw) || isNullable(member) });
      const inner = nonNull(member);
      const base = typeof op.example[name] === 'object' && op.example[name] !== null && !Array.isArray(op.example[name]) ? op.example[name] : {};
      for (const [sub, subRaw] of Object.entries<Json>(inner.type === 'object' ? (inner.properties ?? {}) : {})) {
        cases.push({
          field: `${name}.${sub}`,
          body: { ...op.example, [name]: { ...base, [sub]: null } },
          nullable: isNullable(subRaw) || isNullable(resolve(subRaw)),
        });
      }
      if (inner.type === 'object' && typeof inner.additionalProperties === 'object') {
        cases.push({ field: `${name}.X_NULL`, body: { ...op.example, [name]: { ...base, X_NULL: null } }, nullable: isNullable(inner.additionalProperties) });
      }
    }
    return cases;
  }

  it('finds the operations with bodies to walk', () => {
    expect(operations.map((op) => `${op.method} ${op.path}`)).toEqual(
      expect.arrayContaining(['post /applications', 'put /applications/{id}', 'post /proxies', 'put /proxies/{id}', 'patch /proxies/{id}']),
    );
  });

  it.each(operations.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op] as const))(
    '%s: null where the document allows it, a 400 where it does not',
    async (_, op) => {
      const disagreements: string[] = [];
      for (const { field, body, nullable } of nullCases(op)) {
        const res = await send(op, body);
        // Null for a nullable member means what leaving it out means: refused only where leaving it out is (a rule
        // across members, such as permissions or rules being non-empty).
        if (nullable && names(res, field) && !names(await send(op, without(body, field)), field)) {
          disagreements.push(`${field} is nullable in the document, the API refused null (and took it left out): ${res.text}`);
        }
        if (!nullable && !names(res, field))
          disagreements.push(`${field} is not nullable in the document, the API answered ${res.status} to null: ${res.text.slice(0, 200)}`);
      }
      expect(disagreements).toEqual([]);
    },
  );

  // ---- dates ------------------------------------------------------------------------------------------------------
  const admits = (schema: Json, format: string): boolean => schema.format === format || (schema.anyOf ?? []).some((s: Json) => admits(s, format));
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
  const SAMPLES = {
    dateTime: [inAnHour, inAnHour.replace(/\.\d+Z$/, 'Z'), inAnHour.replace('Z', '+00:00')],
    // A date alone (midnight UTC, within the next 24 hours for expires_at) and a time without an offset.
    date: [tomorrow],
    never: [inAnHour.replace('Z', ''), `${tomorrow}T10:00`, '2026', '2026-11', '2026-W48-1', '2026-02-30', '20261126T100000Z'],
  };

  interface DateField {
    where: string;
    field: string;
    schema: Json;
    send: (value: string) => Promise<Response>;
  }
  const dateFields: DateField[] = [];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    if (path.includes('{')) continue;
    for (const parameter of item.get?.parameters ?? []) {
      const schema = resolve(parameter.schema);
      if (parameter.in !== 'query' || !(admits(schema, 'date-time') || admits(schema, 'date'))) continue;
      dateFields.push({
        where: `GET ${path}?${parameter.name}`,
        field: parameter.name,
        schema,
        send: (value) =>
          t
            .http()
            .get(path)
            .query({ [parameter.name]: value })
            .set('SVC-API-KEY', keyFor(path)),
      });
    }
  }
  for (const op of operations) {
    for (const [name, raw] of Object.entries<Json>(op.schema.properties)) {
      const schema = nonNull(resolve(raw));
      if (!(admits(schema, 'date-time') || admits(schema, 'date'))) continue;
      // The example of this operation that takes the member (an expiring application for expires_at): the first one
      // that takes a date-time there.
      const examples = Object.values<Json>(document.paths[op.path][op.method].requestBody.content[op.mediaType].examples).map((e) => e.value);
      let base: Json | undefined;
      const sendWith = async (value: string) => {
        for (const example of base ? [base] : examples) {
          const res = await send(op, { ...example, [name]: value });
          if (base || res.status < 400) {
            base = example;
            return res;
          }
        }
        throw new Error(`no example of ${op.method} ${op.path} takes ${name}=${value}`);
      };
      dateFields.push({ where: `${op.method.toUpperCase()} ${op.path} ${name}`, field: name, schema, send: sendWith });
    }
  }

  it('finds the date parameters and members to walk', () => {
    expect(dateFields.map((f) => f.where)).toEqual(
      expect.arrayContaining([
        'GET /logs?start_date',
        'GET /logs?end_date',
        'GET /logs/export?start_date',
        'GET /applications?unused_since',
        'POST /applications expires_at',
      ]),
    );
  });

  it.each(dateFields.map((f) => [f.where, f] as const))('%s takes exactly the dates its schema admits', async (_, f) => {
    const disagreements: string[] = [];
    const check = async (value: string, admitted: boolean) => {
      const res = await f.send(value);
      if (admitted && names(res, f.field)) disagreements.push(`${value} is admitted by the document, refused by the API: ${res.text}`);
      if (!admitted && !names(res, f.field)) disagreements.push(`${value} is not admitted by the document, the API answered ${res.status}`);
    };
    for (const value of SAMPLES.dateTime) await check(value, admits(f.schema, 'date-time'));
    for (const value of SAMPLES.date) await check(value, admits(f.schema, 'date'));
    for (const value of SAMPLES.never) await check(value, false);
    expect(disagreements).toEqual([]);
  });
});
