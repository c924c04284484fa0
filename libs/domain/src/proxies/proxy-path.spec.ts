import { pathEscape, PathEscapeError, requireContainedPath } from './proxy-path';

/** Every way of writing a step outside the destination's path that a server (or something in front of it) may honour. */
describe('pathEscape', () => {
  it.each([
    ['/../../secret', 'dot segments'],
    ['/./secret', 'dot segments'],
    ['/a/..', 'dot segments'],
    ['/%2e%2e/secret', 'dot segments'],
    ['/%2E%2e/secret', 'dot segments'],
    ['/.%2e/secret', 'dot segments'],
    ['/%2e/secret', 'dot segments'],
    ['/%252e%252e/secret', 'dot segments'],
    ['/%25252E%25252E/secret', 'dot segments'],
    ['/%%32%65%%32%65/secret', 'dot segments'],
    ['/%ef%bc%8e%ef%bc%8e/secret', 'dot segments'],
    ['/%E2%80%A5/secret', 'dot segments'],
    ['/..;/secret', 'dot segments'],
    ['/%2e%2e;jsessionid=1/secret', 'dot segments'],
    ['/..%3f/secret', 'dot segments'],
    ['/..%3Fx=1/secret', 'dot segments'],
    ['/%2e%2e%23/secret', 'dot segments'],
    ['/..%253f/secret', 'dot segments'],
    ['/.%23x', 'dot segments'],
    ['/.../secret', 'dot segments'],
    ['/..%20/secret', 'dot segments'],
    ['/..%09/secret', 'dot segments'],
    ['/..\\secret', 'backslash'],
    ['/..%5csecret', 'backslash'],
    ['/..%255Csecret', 'backslash'],
    ['/a%ef%bc%bcb', 'backslash'],
    ['/a%2fb', 'slash'],
    ['/a%2Fb', 'slash'],
    ['/a%252fb', 'slash'],
    ['/a%ef%bc%8fb', 'slash'],
    ['/%2e%2e%2f%2e%2e%2fsecret', 'slash'],
    ['/a%00b', 'control'],
    ['/a%0d%0aX-Injected:%201', 'control'],
    ['/%c0%ae%c0%ae/secret', 'percent-encoded'],
    ['/%e0%80%ae/secret', 'percent-encoded'],
    ['/%ff', 'percent-encoded'],
    ['/%u002e%u002e/secret', 'percent-encoded'],
    ['/%25u002e', 'percent-encoded'],
    ['/\u2025/secret', 'percent-encoded'],
    ['/caf\u00e9', 'percent-encoded'],
    ['/%25252525252e', 'percent-encoded'],
    ['relative', 'start with /'],
  ])('refuses %j (%s)', (path, why) => {
    const reason = pathEscape(path);
    expect(reason).toBeDefined();
    expect(reason).toContain(why === 'dot segments' ? "'.' or '..' segments" : why);
    expect(() => requireContainedPath(path)).toThrow(PathEscapeError);
  });

  it.each([
    '',
    '/',
    '/a/b.c/d',
    '/v1.2/x',
    '/file..txt',
    '/.well-known/x',
    '/100%25',
    '/100%',
    '/%2541',
    '/a%20b',
    '/%E2%82%AC',
    '/a;b=c',
    '/a%3Fb',
    '/a%23b',
    '/..a%3F',
    '/a//b',
    "/a-b_c~d!$&'()*+,=:@",
  ])('lets %j through', (path) => {
    expect(pathEscape(path)).toBeUndefined();
    expect(() => requireContainedPath(path)).not.toThrow();
  });

  it('answers for plain paths (the fast lane: unreserved characters only) as the full checks do', () => {
    const segments = ['', '.', '..', '...', 'a', 'a.', '.a', '..a', '~', '-_', 'A9', '.~'];
    const paths = segments.flatMap((a) => segments.flatMap((b) => ['', ...segments].map((c) => `/${a}/${b}${c === '' ? '' : `/${c}`}`)));
    for (const path of paths) {
      const dotsOnly = path
        .slice(1)
        .split('/')
        .some((segment) => /^\.+$/.test(segment));
      expect([path, pathEscape(path) !== undefined]).toEqual([path, dotsOnly]);
    }
  });

  it('is a 400-coded domain error whose message says why', () => {
    const error = new PathEscapeError('must not contain encoded slashes');
    expect(error.code).toBe('validation');
    expect(error.message).toBe('The proxy path must not contain encoded slashes');
  });
});
