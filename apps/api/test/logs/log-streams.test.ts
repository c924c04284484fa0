import { randomUUID } from 'node:crypto';
import { CreatedTenant, LOG_STREAM_KINDS, LogChainWriter, LogStreamKind, STREAM_SETTINGS } from '@gatehouse/domain';
import { findPlaintext } from '@gatehouse/test-support/plaintext-scan';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';

jest.setTimeout(60_000);

const MERGE_PATCH = 'application/merge-patch+json';
const SECRETS = ['token', 'api_key', 'signing_secret'];
/** The settings the API shows (secrets are write-only). */
const publicOf = (settings: Record<string, unknown>) => Object.fromEntries(Object.entries(settings).filter(([k]) => !SECRETS.includes(k)));

describe('/logs/streams', () => {
  let t: TestApp;
  let tenant: CreatedTenant;

  beforeAll(async () => {
    // Loopback allowed, as the proxy tests do; the SSRF test below uses an app without it.
    t = await startTestApp({ PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' });
    tenant = await t.tenant();
  });
  afterAll(() => t.close());

  const api = (key = tenant.key) => ({
    post: (path: string, body: unknown) =>
      t
        .http()
        .post(path)
        .set('SVC-API-KEY', key)
        .send(body as object),
    get: (path: string) => t.http().get(path).set('SVC-API-KEY', key),
    patch: (path: string, body: unknown) => t.http().patch(path).set('SVC-API-KEY', key).set('content-type', MERGE_PATCH).send(JSON.stringify(body)),
    delete: (path: string) => t.http().delete(path).set('SVC-API-KEY', key),
  });

  const outboxMessages = async (tenantId: string): Promise<string[]> =>
    (
      await t.database.dataSource.query(`SELECT message FROM audit_outbox WHERE tenant_id = $1 AND message LIKE 'Log stream%' ORDER BY created_at`, [tenantId])
    ).map((r: { message: string }) => r.message);

  it('creates an https stream, returns its signing secret once, and never again', async () => {
    const res = await api()
      .post('/logs/streams', { name: 'siem', kind: 'https', settings: { url: 'https://127.0.0.1:9/hook' }, start: 'beginning' })
      .expect(201);
    expect(res.headers.location).toBe(`/logs/streams/${res.body.id}`);
    expect(res.body).toMatchObject({
      name: 'siem',
      kind: 'https',
      settings: { url: 'https://127.0.0.1:9/hook', batch_size: 500 },
      secrets: ['signing_secret'],
      state: 'active',
      last_error: null,
      last_synced_at: null,
      position: 0,
      lag: { logs: 0, seconds: null },
      delivered: 0,
      redelivered: 0,
    });
    expect(res.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await api().get(`/logs/streams/${res.body.id}`).expect(200);
    expect(got.body.signing_secret).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain(res.body.signing_secret.slice(6));
    const listed = await api().get('/logs/streams').expect(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(res.body.id);
    expect(JSON.stringify(listed.body)).not.toContain(res.body.signing_secret.slice(6));
  });

  it('keeps credentials write-only and sealed at rest: never returned, never in plaintext in the database', async () => {
    const token = `hec-${randomUUID()}`;
    const apiKey = `dd-${randomUUID()}`;
    const splunk = await api()
      .post('/logs/streams', { name: 'splunk', kind: 'splunk_hec', settings: { url: 'https://127.0.0.1:8088', token, index: 'audit' } })
      .expect(201);
    expect(splunk.body.settings).toEqual({
      url: 'https://127.0.0.1:8088',
      index: 'audit',
      source: 'gatehouse',
      sourcetype: 'gatehouse:audit',
      batch_size: 500,
    });
    expect(splunk.body.secrets).toEqual(['token']);
    expect(splunk.body.signing_secret).toBeUndefined();
    const datadog = await api()
      .post('/logs/streams', { name: 'dd', kind: 'datadog', settings: { api_key: apiKey, tags: 'env:test' } })
      .expect(201);
    expect(datadog.body.settings).toEqual({
      url: 'https://http-intake.logs.datadoghq.com',
      service: 'gatehouse',
      source: 'gatehouse',
      tags: 'env:test',
      batch_size: 500,
    });
    for (const res of [splunk, datadog, await api().get('/logs/streams?size=100')]) {
      expect(JSON.stringify(res.body)).not.toContain(token);
      expect(JSON.stringify(res.body)).not.toContain(apiKey);
    }
    expect(await findPlaintext(t.database.dataSource, undefined, [token, apiKey])).toEqual([]);
    // An update that leaves the token out keeps it; one that gives a new token replaces it (still sealed).
    const renamed = await api()
      .patch(`/logs/streams/${splunk.body.id}`, { name: 'splunk-2', settings: { index: null } })
      .expect(200);
    expect(renamed.body).toMatchObject({ name: 'splunk-2', secrets: ['token'] });
    expect(renamed.body.settings.index).toBeUndefined();
    const next = `hec-${randomUUID()}`;
    await api()
      .patch(`/logs/streams/${splunk.body.id}`, { settings: { token: next } })
      .expect(200);
    expect(await findPlaintext(t.database.dataSource, undefined, [next])).toEqual([]);
  });

  it('refuses bad kinds and settings with every error listed', async () => {
    const kind = await api().post('/logs/streams', { name: 'x', kind: 'kafka', settings: {} }).expect(400);
    expect(kind.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(kind.body.errors).toEqual({ kind: ['must be one of https, syslog, splunk_hec, datadog'] });

    const bad = await api()
      .post('/logs/streams', {
        name: '',
        kind: 'splunk_hec',
        settings: { url: 'ftp://example.com', batch_size: 5000, colour: 'red', tls_ca: 'not a pem' },
        start: 'yesterday',
      })
      .expect(400);
    expect(bad.body.errors).toEqual({
      start: expect.any(Array),
    });
    const body = await api()
      .post('/logs/streams', { name: '', kind: 'splunk_hec', settings: { url: 'ftp://example.com', batch_size: 5000, colour: 'red', tls_ca: 'not a pem' } })
      .expect(400);
    expect(body.body.errors).toEqual({
      name: ['is required'],
      'settings.url': ['must be an https:// URL'],
      'settings.token': ['is required'],
      'settings.batch_size': ['must be an integer from 1 to 1000'],
      'settings.colour': ['is not a setting of a splunk_hec stream'],
      'settings.tls_ca': ['must be PEM certificates (at most 65536 characters)'],
    });
    const generated = await api()
      .post('/logs/streams', { name: 'h', kind: 'https', settings: { url: 'https://example.com', signing_secret: 'whsec_mine' } })
      .expect(400);
    expect(generated.body.errors).toEqual({ 'settings.signing_secret': ['is set by the service and cannot be given'] });
    const notObject = await api()
      .post('/logs/streams', { name: 'h', kind: 'https', settings: ['x'] })
      .expect(400);
    expect(notObject.body.errors).toEqual({ settings: ['must be an object'] });
    const unknown = await api()
      .post('/logs/streams', { name: 'h', kind: 'https', settings: { url: 'https://example.com' }, extra: 1 })
      .expect(400);
    expect(unknown.body.errors).toEqual({ extra: ['is not allowed'] });
  });

  it('refuses every oversized setting, on create and on update, with a 400 naming it; a body past BODY_LIMIT_BYTES is a 413', async () => {
    // A valid stream of each kind, then each of its string settings one character past its limit and far past it
    // (300,000 characters, well inside the 1 MiB body limit): always a 400 ProblemDetails naming that setting alone.
    const valid: Record<LogStreamKind, Record<string, unknown>> = {
      https: { url: 'https://example.com/h' },
      syslog: { host: 'logs.example.com' },
      splunk_hec: { url: 'https://example.com', token: 'hec-token' },
      datadog: { api_key: 'dd-key' },
    };
    const oversized = (type: string, length: number): string => {
      if (type === 'url') return `https://example.com/${'a'.repeat(length - 20)}`;
      if (type === 'pem') return `-----BEGIN CERTIFICATE-----\n${'A'.repeat(length - 54)}\n-----END CERTIFICATE-----`;
      return 'a'.repeat(length);
    };
    const limitOf = (type: string, rule: { max?: number; secret?: boolean }) =>
      ({ url: 400, host: 253, pem: 65_536 })[type] ?? (rule.secret ? 1000 : (rule.max ?? 200));
    let checked = 0;
    for (const kind of LOG_STREAM_KINDS) {
      const stream = await api()
        .post('/logs/streams', { name: `limits-${kind}`, kind, settings: valid[kind] })
        .expect(201);
      for (const [field, rule] of Object.entries(STREAM_SETTINGS[kind])) {
        if (rule.generated || rule.type === 'integer' || rule.type === 'boolean') continue;
        for (const length of [limitOf(rule.type, rule) + 1, 300_000]) {
          const value = oversized(rule.type, length);
          expect(value.length).toBe(length);
          const created = await api().post('/logs/streams', { name: 'x', kind, settings: { ...valid[kind], [field]: value } });
          const updated = await api().patch(`/logs/streams/${stream.body.id}`, { settings: { [field]: value } });
          for (const res of [created, updated]) {
            expect({ kind, field, length, status: res.status, type: res.headers['content-type'] }).toEqual({
              kind,
              field,
              length,
              status: 400,
              type: expect.stringMatching(/^application\/problem\+json/),
            });
            expect(Object.keys(res.body.errors)).toEqual([`settings.${field}`]);
          }
          checked++;
        }
      }
      expect((await api().get(`/logs/streams/${stream.body.id}`).expect(200)).body.settings).toEqual(expect.objectContaining(publicOf(valid[kind])));
      await api().delete(`/logs/streams/${stream.body.id}`).expect(204);
    }
    expect(checked).toBeGreaterThanOrEqual(2 * 17);
    const name = await api()
      .post('/logs/streams', { name: 'n'.repeat(300_000), kind: 'https', settings: valid.https })
      .expect(400);
    expect(Object.keys(name.body.errors)).toEqual(['name']);
    for (const field of ['kind', 'start']) {
      const res = await api()
        .post('/logs/streams', { name: 'x', kind: 'https', settings: valid.https, [field]: 'k'.repeat(300_000) })
        .expect(400);
      expect(Object.keys(res.body.errors)).toEqual([field]);
      expect(res.text.length).toBeLessThan(2000);
    }
    // Unknown setting names are echoed cut short, twenty at most: never the body back.
    const longName = await api()
      .post('/logs/streams', { name: 'x', kind: 'https', settings: { ...valid.https, ['k'.repeat(300_000)]: 1 } })
      .expect(400);
    expect(Object.keys(longName.body.errors)).toEqual([`settings.${'k'.repeat(64)}…`]);
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`unknown_${i}`, i]));
    const manyNames = await api()
      .post('/logs/streams', { name: 'x', kind: 'https', settings: { ...valid.https, ...many } })
      .expect(400);
    expect(Object.keys(manyNames.body.errors)).toHaveLength(21);
    expect(manyNames.body.errors.settings).toEqual(['has 5000 names that are not settings of a https stream']);

    // Past the API's body limit (BODY_LIMIT_BYTES, 1 MiB by default) the request is refused before it is parsed.
    const huge = await api().post('/logs/streams', { name: 'x', kind: 'syslog', settings: { host: 'logs.example.com', tls_ca: oversized('pem', 1_100_000) } });
    expect(huge.status).toBe(413);
    expect(huge.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(huge.body).toMatchObject({ status: 413, title: expect.any(String) });
  });

  it('refuses syslog over plain TCP unless the operator allows it', async () => {
    const refused = await api()
      .post('/logs/streams', { name: 's', kind: 'syslog', settings: { host: 'logs.example.com', port: 514, tls: false } })
      .expect(400);
    expect(refused.body.errors).toEqual({ 'settings.tls': [expect.stringContaining('TLS only')] });
    const tls = await api()
      .post('/logs/streams', { name: 's', kind: 'syslog', settings: { host: 'logs.example.com' } })
      .expect(201);
    expect(tls.body.settings).toEqual({
      host: 'logs.example.com',
      port: 6514,
      tls: true,
      app_name: 'gatehouse',
      hostname: 'gatehouse',
      facility: 13,
      batch_size: 500,
    });

    const allowing = await startTestApp({ LOG_STREAM_ALLOW_PLAIN_SYSLOG: 'true' });
    try {
      const other = await allowing.tenant();
      await allowing
        .http()
        .post('/logs/streams')
        .set('SVC-API-KEY', other.key)
        .send({ name: 's', kind: 'syslog', settings: { host: 'logs.example.com', port: 514, tls: false } })
        .expect(201);
    } finally {
      await allowing.close();
    }
  });

  it('obeys the proxy destination policy: private and loopback literals are refused without an allowed range', async () => {
    const strict = await startTestApp();
    try {
      const other = await strict.tenant();
      const send = (body: object) => strict.http().post('/logs/streams').set('SVC-API-KEY', other.key).send(body);
      const res = await send({ name: 'x', kind: 'https', settings: { url: 'https://127.0.0.1/hook' } }).expect(400);
      expect(res.body.errors).toEqual({ 'settings.url': ['must not be a private, loopback, link-local or otherwise non-public address'] });
      const syslog = await send({ name: 'x', kind: 'syslog', settings: { host: '10.0.0.1' } }).expect(400);
      expect(syslog.body.errors).toEqual({ 'settings.host': ['must not be a private, loopback, link-local or otherwise non-public address'] });
      const metadata = await send({ name: 'x', kind: 'datadog', settings: { url: 'https://169.254.169.254', api_key: 'k' } }).expect(400);
      expect(Object.keys(metadata.body.errors)).toEqual(['settings.url']);
    } finally {
      await strict.close();
    }
  });

  it('pauses, resumes, updates and deletes, each audited; another tenant sees 404; a key without log:stream 403', async () => {
    const created = await api()
      .post('/logs/streams', { name: 'ops', kind: 'https', settings: { url: 'https://example.com/a' } })
      .expect(201);
    const id = created.body.id;
    expect((await api().post(`/logs/streams/${id}/pause`, {}).expect(200)).body.state).toBe('paused');
    expect((await api().get(`/logs/streams/${id}`).expect(200)).body.state).toBe('paused');
    expect((await api().post(`/logs/streams/${id}/resume`, {}).expect(200)).body.state).toBe('active');
    const moved = await api()
      .patch(`/logs/streams/${id}`, { settings: { url: 'https://example.com/b', batch_size: 10 } })
      .expect(200);
    expect(moved.body.settings).toEqual({ url: 'https://example.com/b', batch_size: 10 });
    expect(moved.body.secrets).toEqual(['signing_secret']);
    const badPatch = await api()
      .patch(`/logs/streams/${id}`, { settings: { url: null } })
      .expect(400);
    expect(badPatch.body.errors).toEqual({ 'settings.url': ['is required'] });

    // Another tenant's key: every route on this id is a 404 ProblemDetails (never a 403 that would confirm it exists),
    // and nothing about the stream changes.
    const stranger = await t.tenant();
    const unchanged = async () => {
      const { name, settings, state, secrets, modified_at } = (await api().get(`/logs/streams/${id}`).expect(200)).body;
      return { name, settings, state, secrets, modified_at };
    };
    const before = await unchanged();
    expect(before).toMatchObject({ name: 'ops', state: 'active', modified_at: expect.any(String) });
    const strangers = [
      api(stranger.key).get(`/logs/streams/${id}`),
      api(stranger.key).patch(`/logs/streams/${id}`, { name: 'taken', settings: { url: 'https://attacker.example/x' } }),
      api(stranger.key).post(`/logs/streams/${id}/pause`, {}),
      api(stranger.key).post(`/logs/streams/${id}/resume`, {}),
      api(stranger.key).delete(`/logs/streams/${id}`),
    ];
    for (const res of await Promise.all(strangers)) {
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(res.body)).not.toContain('ops');
    }
    expect((await api(stranger.key).get('/logs/streams').expect(200)).body.data).toEqual([]);
    expect(await unchanged()).toEqual(before);
    expect((await outboxMessages(stranger.tenant.id)).length).toBe(0);
    const reader = await api()
      .post('/applications', { name: 'reader', type: 'management', permissions: ['log:read'] })
      .expect(201);
    await api(reader.body.key).get('/logs/streams').expect(403);
    await api(reader.body.key)
      .post('/logs/streams', { name: 'x', kind: 'https', settings: { url: 'https://example.com' } })
      .expect(403);

    await api().delete(`/logs/streams/${id}`).expect(204);
    await api().get(`/logs/streams/${id}`).expect(404);
    await api().get(`/logs/streams/not-a-uuid`).expect(400);
    const messages = await outboxMessages(tenant.tenant.id);
    const mine = messages.filter((m) => m.includes(id));
    expect(mine).toEqual([
      `Log stream 'ops' (https, ${id}) created from position 1`,
      `Log stream 'ops' (https, ${id}) updated: paused`,
      `Log stream 'ops' (https, ${id}) updated: resumed`,
      `Log stream 'ops' (https, ${id}) updated: settings changed`,
      `Log stream 'ops' (https, ${id}) deleted`,
    ]);
    for (const m of messages) expect(m).not.toContain('whsec_');
  });

  it('holds a rate-limited key to its limit on every stream route: a 429 creates, changes and audits nothing', async () => {
    const limited = await api()
      .post('/applications', { name: 'limited streams', type: 'management', permissions: ['log:stream'], rate_limit: { limit: 3, window_seconds: 600 } })
      .expect(201);
    const created = await api(limited.body.key)
      .post('/logs/streams', { name: 'limited', kind: 'https', settings: { url: 'https://example.com/limited' } })
      .expect(201);
    const id = created.body.id;
    await api(limited.body.key).post(`/logs/streams/${id}/pause`, {}).expect(200);
    await api(limited.body.key).get(`/logs/streams/${id}`).expect(200);
    const before = await outboxMessages(tenant.tenant.id);
    const refused = [
      api(limited.body.key).post('/logs/streams', { name: 'more', kind: 'https', settings: { url: 'https://example.com/more' } }),
      api(limited.body.key).get('/logs/streams'),
      api(limited.body.key).get(`/logs/streams/${id}`),
      api(limited.body.key).patch(`/logs/streams/${id}`, { name: 'renamed' }),
      api(limited.body.key).post(`/logs/streams/${id}/resume`, {}),
      api(limited.body.key).delete(`/logs/streams/${id}`),
    ];
    for (const res of await Promise.all(refused)) {
      expect(res.status).toBe(429);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    const after = (await api().get(`/logs/streams/${id}`).expect(200)).body;
    expect(after).toMatchObject({ name: 'limited', state: 'paused' });
    expect((await api().get('/logs/streams').expect(200)).body.data.filter((s: { name: string }) => s.name === 'more')).toEqual([]);
    expect(await outboxMessages(tenant.tenant.id)).toEqual(before);
    await api().delete(`/logs/streams/${id}`).expect(204);
  });

  it("shows the lag: logs behind the tenant's chain head, and the age of the oldest one", async () => {
    const other = await t.tenant();
    const created = await api(other.key)
      .post('/logs/streams', { name: 'lag', kind: 'https', settings: { url: 'https://example.com' }, start: 'beginning' })
      .expect(201);
    await t.app.get(LogChainWriter).append(
      [0, 1, 2].map((i) => ({
        id: randomUUID(),
        tenantId: other.tenant.id,
        actorId: null,
        actorType: 'system' as const,
        entityType: 'tenant',
        entityId: other.tenant.id,
        operation: 'update' as const,
        message: `m${i}`,
        createdAt: new Date(Date.now() - 60_000 + i),
      })),
    );
    const res = await api(other.key).get(`/logs/streams/${created.body.id}`).expect(200);
    expect(res.body).toMatchObject({ position: 0, head_position: 3, lag: { logs: 3 } });
    expect(res.body.lag.seconds).toBeGreaterThanOrEqual(59);
    // A stream created from `now` starts at the head.
    const fromNow = await api(other.key)
      .post('/logs/streams', { name: 'now', kind: 'https', settings: { url: 'https://example.com' } })
      .expect(201);
    expect(fromNow.body).toMatchObject({ position: 3, head_position: 3, lag: { logs: 0, seconds: null } });
  });
});
