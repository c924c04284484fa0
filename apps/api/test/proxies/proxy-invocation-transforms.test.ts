import { TestApp } from '@gatehouse/test-support/test-app';
import { newTenant } from '../support/application-fixtures';
import { RecordingUpstream, useProxyInvocation } from './proxy-invocation.fixture';

describe('proxy invocation (/proxy)', () => {
  const env = useProxyInvocation();
  let t: TestApp;
  let upstream: RecordingUpstream;
  beforeAll(() => ({ t, upstream } = env));
  const { proxy, lastSeen } = env;

  describe('transforms', () => {
    it('a request transform rewrites body and headers, sees method, path, query and configuration', async () => {
      const owner = await newTenant(t);
      const code = `module.exports = async function (req) {
        const { body, headers, method, path, query } = req.args;
        return {
          body: { ...body, card: undefined, seen: { method, path, query, secret: req.configuration.SECRET } },
          headers: { ...headers, 'x-added': 'by-transform', 'content-length': '1' },
        };
      };`;
      const p = await proxy(owner, { require_auth: false, request_transform: { code }, configuration: { SECRET: 's3cr3t' } });
      await t
        .http()
        .post('/proxy/items/9?flag=on&svc-proxy-key=' + p.key)
        .set('content-type', 'application/json')
        .set('x-original', 'yes')
        .send({ card: '4242', amount: 10 })
        .expect(200);
      const sent = lastSeen();
      expect(sent.url).toBe('/api/items/9?flag=on');
      expect(JSON.parse(sent.body.toString())).toEqual({
        amount: 10,
        seen: { method: 'POST', path: '/items/9', query: { flag: 'on' }, secret: 's3cr3t' },
      });
      expect(sent.headers['content-length']).toBe(String(sent.body.length));
      expect(sent.headers['x-added']).toBe('by-transform');
      expect(sent.headers['x-original']).toBe('yes');
    });

    it('gives a request transform the header names as the caller wrote them, read, written and deleted in any case', async () => {
      const owner = await newTenant(t);
      const code = `module.exports = async function (req) {
        const h = req.args.headers;
        const names = Object.keys(h).filter((name) => name.toLowerCase().startsWith('x-'));
        const read = [h['x-custom-key'], h['X-CUSTOM-KEY'], h['X-Custom-Key']];
        delete h['x-secret'];
        h['x-CUSTOM-key'] = 'rewritten';
        return { body: { names, read }, headers: h };
      };`;
      const p = await proxy(owner, { require_auth: false, request_transform: { code } });
      await t
        .http()
        .post('/proxy/h?svc-proxy-key=' + p.key)
        .set('X-Custom-Key', 'abc')
        .set('X-Secret', 'must-not-pass')
        .set('content-type', 'application/json')
        .send({})
        .expect(200);
      const sent = lastSeen();
      expect(JSON.parse(sent.body.toString())).toEqual({ names: ['X-Custom-Key', 'X-Secret'], read: ['abc', 'abc', 'abc'] });
      expect(sent.headers['x-secret']).toBeUndefined();
      expect(sent.headers['x-custom-key']).toBe('rewritten');
    });

    it('hands a non-JSON body to the transform as a string', async () => {
      const owner = await newTenant(t);
      const code = `module.exports = async (req) => ({ body: typeof req.args.body + ':' + req.args.body.toUpperCase(), headers: req.args.headers });`;
      const p = await proxy(owner, { require_auth: false, request_transform: { code } });
      await t.http().post('/proxy/raw').set('svc-proxy-key', p.key).set('content-type', 'text/plain').send('plain words').expect(200);
      expect(lastSeen().body.toString()).toBe('string:PLAIN WORDS');
    });

    it('hands bodies over as they arrived (parsed in the sandbox) and sends what the transform returned byte for byte', async () => {
      const owner = await newTenant(t);
      // Echoes what it saw; a string body goes as it is, anything else as JSON (content type set unless the transform did).
      const code = `module.exports = async (req) => {
        const body = req.args.body;
        if (req.args.headers['x-mode'] === 'string') return { body: 'seen ' + typeof body + ':\\n' + JSON.stringify(body), headers: {} };
        return { body: { type: body === null ? 'null' : typeof body, body }, headers: req.args.headers['x-mode'] === 'typed' ? { 'content-type': 'application/vnd.x+json' } : {} };
      };`;
      const p = await proxy(owner, { require_auth: false, request_transform: { code } });
      const send = async (body: string, contentType: string, mode = '') => {
        await t.http().post('/proxy/raw').set('svc-proxy-key', p.key).set('content-type', contentType).set('x-mode', mode).send(body).expect(200);
        return lastSeen();
      };
      const pretty = JSON.stringify({ a: 'ü\ttab', list: [1, 2] }, null, 2);
      let seen = await send(pretty, 'application/json');
      expect(JSON.parse(seen.body.toString())).toEqual({ type: 'object', body: { a: 'ü\ttab', list: [1, 2] } });
      expect(seen.headers['content-type']).toBe('application/json');
      expect(seen.headers['content-length']).toBe(String(seen.body.length));
      seen = await send('{"not json', 'application/json', 'typed');
      expect(seen.body.toString()).toBe('{"type":"string","body":"{\\"not json"}');
      expect(seen.headers['content-type']).toBe('application/vnd.x+json');
      seen = await send('line 1\nline 2', 'text/plain', 'string');
      expect(seen.body.toString()).toBe('seen string:\n"line 1\\nline 2"');
      seen = await send('{"one":1}', 'text/plain', 'string');
      expect(seen.body.toString()).toBe('seen string:\n"{\\"one\\":1}"');
    });

    it('a response transform rewrites body, headers and status, and runs on every destination response', async () => {
      const owner = await newTenant(t);
      const code = `module.exports = async function (req) {
        const { body, headers, status } = req.args;
        return {
          status: status === 201 ? 202 : status,
          headers: { 'content-type': 'application/json', 'x-upstream': headers['x-upstream'] || 'none' },
          body: { status, masked: typeof body === 'object' ? body.card.slice(-4) : body },
        };
      };`;
      const p = await proxy(owner, { require_auth: false, response_transform: { code } });
      const res = await t.http().post('/proxy/json').set('svc-proxy-key', p.key).send({}).expect(202);
      expect(res.body).toEqual({ status: 201, masked: '4242' });
      expect(res.headers['x-upstream']).toBe('yes');
      expect(res.headers['svc-proxy-destination-status']).toBe('201');
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(res.body))));
      const teapot = await t.http().get('/proxy/teapot').set('svc-proxy-key', p.key).expect(418);
      expect(teapot.body).toEqual({ status: 418, masked: 'short and stout' });
    });

    it('sends a transform error as it is', async () => {
      const owner = await newTenant(t);
      const p = await proxy(owner, {
        require_auth: false,
        request_transform: { code: "module.exports = async () => { throw new BadRequestError('card number is missing'); };" },
      });
      const before = upstream.seen.length;
      const res = await t.http().post('/proxy/x').set('svc-proxy-key', p.key).send({}).expect(400);
      // The platform's body: the class's message as the detail, the constructor's argument among the errors.
      expect(res.body).toEqual({
        proxy_error: { title: 'One or more validation errors occurred.', status: 400, detail: 'Bad Request', errors: { error: ['card number is missing'] } },
      });
      expect(upstream.seen.length).toBe(before);

      const custom = await proxy(owner, {
        require_auth: false,
        response_transform: {
          code: "module.exports = async (req) => { throw new CustomHttpResponseError({ status: 409, headers: { 'x-why': 'dup' }, body: { dup: true } }); };",
        },
      });
      const res2 = await t.http().get('/proxy/json').set('svc-proxy-key', custom.key).expect(409);
      expect(res2.body).toEqual({ dup: true });
      expect(res2.headers['x-why']).toBe('dup');
      expect(res2.headers['svc-proxy-destination-status']).toBe('201');

      const thrown = await proxy(owner, { require_auth: false, request_transform: { code: "module.exports = async () => { throw new Error('boom'); };" } });
      const res3 = await t.http().get('/proxy/x').set('svc-proxy-key', thrown.key).expect(500);
      expect(res3.body.proxy_error).toMatchObject({ title: 'ReactorRuntimeError', status: 500, detail: expect.stringContaining('boom') });
    });
  });
});
