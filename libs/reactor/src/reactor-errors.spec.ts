import { PROXY_ERROR_STATUSES, type ProxyErrorName, Reactor, ReactorCompileError, type TransformInput } from './index';
import { PROXY_ERROR_MESSAGES } from './transform-contract';

function input(code: string): TransformInput {
  return { tenantId: 'tenant-a', code, args: { body: {}, headers: {}, method: 'GET', path: '/', query: {} }, configuration: {} };
}

function noHostDetails(value: unknown): void {
  const text = JSON.stringify(value);
  for (const leak of ['/work/', 'node_modules', 'node:internal', '.ts:', 'isolated-vm', '    at ']) {
    expect(text).not.toContain(leak);
  }
}

function compileError(reactor: Reactor, code: string): ReactorCompileError {
  try {
    reactor.validate(code);
  } catch (error) {
    expect(error).toBeInstanceOf(ReactorCompileError);
    return error as ReactorCompileError;
  }
  throw new Error('validate accepted the code');
}

describe('Reactor: errors thrown by transforms', () => {
  let reactor: Reactor;
  beforeAll(() => {
    reactor = new Reactor({ poolSize: 2, timeoutMs: 3000 });
  });
  afterAll(() => reactor.close());

  // The platform's errors package: the constructor takes the errors (a message, a list, an object of lists, an Error),
  // the detail is the class's own message, the title the one of every validation error.
  const TITLE = 'One or more validation errors occurred.';

  it.each(Object.entries(PROXY_ERROR_STATUSES))("maps %s to status %i with the platform's proxy_error body", async (name, status) => {
    const withErrors = await reactor.run(
      input(`module.exports = async () => {
        const e = new ${name}({ card: ['is invalid'], cvc: 'missing', nested: { a: 1 } });
        if (!(e instanceof Error) || e.name !== '${name}' || e.status !== ${status}) throw new Error('not an Error subclass');
        if (!(e instanceof require('@gatehouse/reactor-errors').${name})) throw new Error('not the package class');
        throw e;
      };`),
    );
    expect(withErrors).toEqual({
      ok: false,
      status,
      headers: {},
      body: {
        proxy_error: {
          title: TITLE,
          status,
          detail: PROXY_ERROR_MESSAGES[name as ProxyErrorName],
          errors: { card: ['is invalid'], cvc: ['missing'], nested: ['{"a":1}'] },
        },
      },
      logs: [],
    });

    const withMessage = await reactor.run(input(`module.exports = async () => { throw new ${name}('plain'); };`));
    expect(withMessage.body).toEqual({
      proxy_error: { title: TITLE, status, detail: PROXY_ERROR_MESSAGES[name as ProxyErrorName], errors: { error: ['plain'] } },
    });
  });

  it('reports the errors argument as the platform does: a list, an Error, nothing', async () => {
    const bodies = await Promise.all(
      [`['a', 2, { b: true }]`, `new TypeError('bad card')`, ``].map(
        async (arg) => (await reactor.run(input(`module.exports = async () => { throw new BadRequestError(${arg}); };`))).body,
      ),
    );
    expect(bodies.map((b) => (b as { proxy_error: { errors: unknown } }).proxy_error.errors)).toEqual([
      { error: ['a', '2', '{"b":true}'] },
      { error: ['bad card'] },
      { error: ['Something went wrong. Please try again.'] },
    ]);
  });

  it('returns exactly the response of a CustomHttpResponseError', async () => {
    const result = await reactor.run(
      input(`module.exports = async () => {
        throw new CustomHttpResponseError({ status: 418, headers: { 'x-teapot': 'yes', 'retry-after': 5 }, body: { short: 'and stout' } });
      };`),
    );
    expect(result).toEqual({ ok: false, status: 418, headers: { 'x-teapot': 'yes', 'retry-after': '5' }, body: { short: 'and stout' }, logs: [] });
  });

  it('turns any other throw into a 500 ReactorRuntimeError with the message and no host details', async () => {
    const result = await reactor.run(input(`module.exports = async () => { console.log('before'); throw new Error('boom'); };`));
    expect(result).toEqual({
      ok: false,
      status: 500,
      headers: {},
      body: { proxy_error: { title: 'ReactorRuntimeError', status: 500, detail: 'boom', errors: {} } },
      logs: ['before'],
    });
    noHostDetails(result.body);

    expect((await reactor.run(input(`module.exports = () => { throw 'a string'; };`))).body).toMatchObject({ proxy_error: { detail: 'a string' } });
    expect((await reactor.run(input(`module.exports = async () => null.x;`))).body).toMatchObject({
      proxy_error: { status: 500, detail: expect.stringContaining('Cannot read properties of null') },
    });
    expect((await reactor.run(input(`throw new TypeError('at load time');`))).body).toMatchObject({ proxy_error: { detail: 'at load time' } });
  });

  it('reports transforms that do not export a function or return something unusable', async () => {
    const notAFunction = await reactor.run(input(`module.exports = { handler() {} };`));
    expect(notAFunction).toMatchObject({ ok: false, status: 500, body: { proxy_error: { detail: expect.stringContaining('must export a function') } } });

    const notAnObject = await reactor.run(input(`module.exports = async () => 42;`));
    expect(notAnObject.body).toMatchObject({ proxy_error: { detail: expect.stringContaining('must return an object') } });

    const badStatus = await reactor.run(input(`module.exports = async () => ({ status: 99, body: 1, headers: {} });`));
    expect(badStatus.body).toMatchObject({ proxy_error: { detail: 'The transform returned an invalid status: 99' } });

    const cyclic = await reactor.run(input(`module.exports = async () => { const body = {}; body.self = body; return { body, headers: {} }; };`));
    expect(cyclic.body).toMatchObject({ proxy_error: { detail: expect.stringContaining('not JSON-serializable') } });
  });

  it('drops header values that are not strings or would split the header', async () => {
    const result = await reactor.run(
      input(
        `module.exports = async () => ({ body: 1, headers: { ok: 'v', n: 1, b: false, nil: null, arr: ['a'], obj: {}, 'bad name': 'x', split: 'a\\r\\nInjected: 1' } });`,
      ),
    );
    expect(result).toMatchObject({ ok: true, headers: { ok: 'v', n: '1', b: 'false' } });
    expect(Object.keys(result.headers).sort()).toEqual(['b', 'n', 'ok']);
  });

  it('answers 500 when code that never went through validate does not compile', async () => {
    const result = await reactor.run(input(`module.exports = async () => {\n  return { body: 1, headers: {} \n};`));
    expect(result).toMatchObject({
      ok: false,
      status: 500,
      body: {
        proxy_error: {
          title: 'ReactorRuntimeError',
          detail: expect.stringMatching(/^The transform code does not compile: SyntaxError: .*\(line \d+, column \d+\)$/),
        },
      },
    });
    const escaping = await reactor.run(input(`})); console.log('escaped'); ((function () {`));
    expect(escaping.logs).toEqual([]);
    expect(escaping.body).toMatchObject({ proxy_error: { detail: expect.stringContaining('does not compile') } });
  });
});

describe('Reactor.validate', () => {
  const reactor = new Reactor({ poolSize: 1 });
  afterAll(() => reactor.close());

  it('accepts code that compiles, without running it', () => {
    expect(() => reactor.validate(`module.exports = async function (req) { return { body: req.args.body, headers: {} }; };`)).not.toThrow();
    expect(() => reactor.validate(`while (true) {}`)).not.toThrow();
    expect(() => reactor.validate(`throw new Error('never runs'); return 1;`)).not.toThrow();
    expect(reactor.stats().processes).toBe(0);
  });

  it('reports the line and column of a syntax error', () => {
    const error = compileError(reactor, `module.exports = async function (req) {\n  const x = 1;\n    }}\n};`);
    expect(error.line).toBe(4);
    expect(error.column).toBe(1);
    expect(error.message).toBe("SyntaxError: Unexpected token '}' (line 4, column 1)");

    const other = compileError(reactor, `module.exports = 1;\nfoo(\n    }`);
    expect([other.line, other.column]).toEqual([3, 5]);
    expect(other.message).toBe("SyntaxError: Unexpected token '}' (line 3, column 5)");

    const early = compileError(reactor, `let a = 1;\nlet a = 2;`);
    expect(early.message).toBe("SyntaxError: Identifier 'a' has already been declared (line 2, column 5)");
  });

  it('reports an unclosed block at the end of the code', () => {
    const error = compileError(reactor, `module.exports = async function () {\n  return 1;`);
    expect(error.message).toBe('SyntaxError: Unexpected end of input (line 2, column 12)');
  });

  it('rejects code that closes the CommonJS wrapper to run outside it', () => {
    expect(compileError(reactor, `}); globalThis.escaped = true; (function () {`).message).toMatch(/^SyntaxError: /);
    // Balanced exactly against the wrapper, so only the separate parse of the body catches it.
    const error = compileError(reactor, `})); globalThis.escaped = true; ((function () {`);
    expect([error.line, error.column]).toEqual([1, 1]);
    expect(error.message).toBe("SyntaxError: Unexpected token '}' (line 1, column 1)");
  });

  it('rejects code over the length limit', () => {
    const error = compileError(reactor, `// ${'x'.repeat(50_000)}`);
    expect(error.message).toContain('the limit is 50000');
    expect([error.line, error.column]).toEqual([1, 50_001]);
    const short = new Reactor({ maxCodeLength: 10, poolSize: 1 });
    expect(() => short.validate('const a = 1;')).toThrow(ReactorCompileError);
    return short.close();
  });
});
