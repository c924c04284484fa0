import { Reactor, type TransformInput } from './index';
import { okBody } from '../test/support/reactor-results';

/** Echoes what the transform saw of its body (type and value) and the order of its args. */
const ECHO = `module.exports = async (req) => ({ body: { type: req.args.body === null ? 'null' : typeof req.args.body, value: req.args.body, keys: Object.keys(req.args) }, headers: {} });`;

function withRaw(text: string, json: boolean, code = ECHO, extra: Partial<TransformInput> = {}): TransformInput {
  return {
    tenantId: 'tenant-bodies',
    code,
    args: { body: null, headers: { 'content-type': json ? 'application/json' : 'text/plain' }, method: 'POST' },
    rawBody: { text, json },
    configuration: {},
    ...extra,
  };
}

describe('Reactor: bodies passed as they arrived (rawBody) and results as bytes to send (payloadResult)', () => {
  let reactor: Reactor;
  beforeAll(() => {
    reactor = new Reactor({ poolSize: 1, timeoutMs: 3000, maxResultLength: 4096 });
  });
  afterAll(() => reactor.close());

  it('parses a JSON body in the sandbox, keeping args.body first among the args', async () => {
    // Twice: the first run loads the module in a fresh context, the second runs in the warm one.
    for (let i = 0; i < 2; i++) {
      const body = okBody(await reactor.run(withRaw('{"card":"4242","n":[1,2]}', true)));
      expect(body).toEqual({ type: 'object', value: { card: '4242', n: [1, 2] }, keys: ['body', 'headers', 'method'] });
    }
  });

  it('gives declared JSON that does not parse as its text, text as text, and an empty body as null', async () => {
    expect(okBody(await reactor.run(withRaw('{"broken": ', true)))).toMatchObject({ type: 'string', value: '{"broken": ' });
    expect(okBody(await reactor.run(withRaw('{"a":1}', false)))).toMatchObject({ type: 'string', value: '{"a":1}' });
    expect(okBody(await reactor.run(withRaw('', true)))).toMatchObject({ type: 'null', value: null });
    expect(okBody(await reactor.run(withRaw('', false)))).toMatchObject({ type: 'null', value: null });
  });

  it('carries bodies holding newlines, tabs and any character intact', async () => {
    const pretty = JSON.stringify({ a: 'tab\there', b: ['ü', '\u2028', 'x\ny'] }, null, 2);
    expect(okBody(await reactor.run(withRaw(pretty, true)))).toMatchObject({ type: 'object', value: JSON.parse(pretty) });
    const text = 'line 1\nline 2\r\n\tand a tab \u0000 ü';
    expect(okBody(await reactor.run(withRaw(text, false)))).toMatchObject({ type: 'string', value: text });
    expect(okBody(await reactor.run(withRaw('a\tb', false)))).toMatchObject({ type: 'string', value: 'a\tb' });
  });

  it('answers the body as the text the sandbox serialised when asked, and as a value otherwise', async () => {
    const code = `module.exports = async (req) => ({ body: req.args.body.out, headers: { 'x-a': '1' }, status: 201 });`;
    const run = (out: unknown, payloadResult: boolean) => reactor.run(withRaw(JSON.stringify({ out }), true, code, { payloadResult }));
    expect(await run({ b: [1, 'ü'] }, true)).toEqual({
      ok: true,
      status: 201,
      body: undefined,
      payload: { text: '{"b":[1,"ü"]}', json: true },
      headers: { 'x-a': '1' },
      logs: [],
    });
    expect(await run('plain\ttext', true)).toEqual({
      ok: true,
      status: 201,
      body: undefined,
      payload: { text: 'plain\ttext', json: false },
      headers: { 'x-a': '1' },
      logs: [],
    });
    expect(await run(7, true)).toMatchObject({ ok: true, payload: { text: '7', json: true } });
    // A string holding a newline, and no body, come as a value.
    expect(await run('two\nlines', true)).toEqual({ ok: true, status: 201, body: 'two\nlines', headers: { 'x-a': '1' }, logs: [] });
    expect(await run(null, true)).toEqual({ ok: true, status: 201, body: null, headers: { 'x-a': '1' }, logs: [] });
    // Not asked: the body as a value, as before.
    expect(await run({ b: 1 }, false)).toEqual({ ok: true, status: 201, body: { b: 1 }, headers: { 'x-a': '1' }, logs: [] });
  });

  it("answers a CustomHttpResponseError's body as text too, and holds the result limit over the body apart", async () => {
    const thrown = await reactor.run(
      withRaw(
        '{}',
        true,
        `module.exports = async () => { throw new CustomHttpResponseError({ status: 418, headers: { 'x-t': 'y' }, body: { short: true } }); };`,
        { payloadResult: true },
      ),
    );
    expect(thrown).toEqual({ ok: false, status: 418, headers: { 'x-t': 'y' }, body: undefined, payload: { text: '{"short":true}', json: true }, logs: [] });
    for (const out of ['"' + 'x'.repeat(5000) + '"', '{"a":"' + 'x'.repeat(5000) + '"}']) {
      const result = await reactor.run(withRaw(out, true, `module.exports = async (req) => ({ body: req.args.body });`, { payloadResult: true }));
      expect(result).toMatchObject({
        ok: false,
        status: 500,
        body: { proxy_error: { title: 'ReactorRuntimeError', detail: 'The transform result exceeds 4096 characters' } },
      });
    }
  });
});
