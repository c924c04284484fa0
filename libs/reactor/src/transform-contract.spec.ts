import { isJsonMediaType, isTransformStatus, proxyErrorBody, transformBodyOf, transformHeaders } from './transform-contract';

describe('the transform contract', () => {
  it('status: an integer from 200 to 599', () => {
    for (const ok of [200, 204, 302, 418, 599]) expect(isTransformStatus(ok)).toBe(true);
    for (const bad of [199, 600, 200.5, '200', NaN, null, undefined, 1e3]) expect(isTransformStatus(bad)).toBe(false);
  });

  it('headers: strings kept, numbers and booleans as text, anything that cannot be sent left out', () => {
    const raw = {
      ok: 'v',
      n: 1,
      b: false,
      nil: null,
      undef: undefined,
      arr: ['a'],
      obj: {},
      'bad name': 'x',
      split: 'a\r\nInjected: 1',
      nul: 'a\0b',
      ctl: 'a\u0001',
      wide: 'é✓',
      latin: 'café',
      'X-Case': 'kept',
    };
    expect(transformHeaders(raw)).toEqual({ headers: { ok: 'v', n: '1', b: 'false', latin: 'café', 'X-Case': 'kept' } });
    expect(transformHeaders(undefined)).toEqual({ headers: {} });
    expect(transformHeaders(JSON.parse('{"__proto__": "x", "a": "1"}'))).toEqual({ headers: { a: '1' } });
  });

  it('headers that are not an object are refused', () => {
    for (const bad of ['a: 1', 3, ['a']]) expect(transformHeaders(bad)).toEqual({ problem: 'The transform returned headers that are not an object' });
  });

  it('proxy_error: the documented body, errors as a map of messages whatever the description held', () => {
    expect(
      proxyErrorBody({ title: 'One or more validation errors occurred.', status: 401, detail: 'Authentication Failed', errors: { error: ['key missing'] } }),
    ).toEqual({
      proxy_error: { title: 'One or more validation errors occurred.', status: 401, detail: 'Authentication Failed', errors: { error: ['key missing'] } },
    });
    expect(proxyErrorBody({ status: 500, detail: 'boom' })).toEqual({ proxy_error: { title: 'ReactorRuntimeError', status: 500, detail: 'boom', errors: {} } });
    expect(proxyErrorBody({ title: 't', status: 400, detail: 3, errors: { a: 'one', b: [1, { x: 1 }], c: null } }).proxy_error).toEqual({
      title: 't',
      status: 400,
      detail: '',
      errors: { a: ['one'], b: ['1', '{"x":1}'], c: ['null'] },
    });
    expect(proxyErrorBody({ status: 400, errors: ['not', 'a', 'map'] }).proxy_error.errors).toEqual({});
  });

  it('bodies: parsed JSON for a JSON media type when it parses, else the text, null when empty', () => {
    expect(isJsonMediaType('application/json; charset=utf-8')).toBe(true);
    expect(isJsonMediaType(['application/problem+json'])).toBe(true);
    expect(isJsonMediaType('text/plain')).toBe(false);
    expect(isJsonMediaType(undefined)).toBe(false);
    expect(transformBodyOf('{"a":1}', true)).toEqual({ a: 1 });
    expect(transformBodyOf('{"a":1}', false)).toBe('{"a":1}');
    expect(transformBodyOf('not json', true)).toBe('not json');
    expect(transformBodyOf('', true)).toBeNull();
  });
});
