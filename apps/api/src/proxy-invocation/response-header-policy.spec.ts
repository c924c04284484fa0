import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { applyProxyResponseHeaderPolicy, enforce, PROXY_RESPONSE_CSP, splitLinks, widelyScopedCookie } from './response-header-policy';

function response(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

describe('the /proxy response header policy', () => {
  it('drops browser-only headers, forces nosniff and adds the sandbox after any existing policy', () => {
    const res = response();
    res.setHeader('Service-Worker-Allowed', '/');
    res.setHeader('Clear-Site-Data', '"*"');
    res.setHeader('X-Content-Type-Options', 'none');
    res.setHeader('Content-Security-Policy', "img-src 'self'");
    res.setHeader('Content-Type', 'text/html');
    enforce(res);
    expect(res.getHeader('service-worker-allowed')).toBeUndefined();
    expect(res.getHeader('clear-site-data')).toBeUndefined();
    expect(res.getHeader('x-content-type-options')).toBe('nosniff');
    expect(res.getHeader('content-security-policy')).toEqual(["img-src 'self'", PROXY_RESPONSE_CSP]);
    expect(res.getHeader('content-type')).toBe('text/html');
  });

  it('is applied when the head is written, to headers given to writeHead as well', () => {
    const res = response();
    applyProxyResponseHeaderPolicy(res);
    res.writeHead(200, 'OK', { 'service-worker-allowed': '/', 'x-kept': 'yes' });
    expect(res.getHeader('service-worker-allowed')).toBeUndefined();
    expect(res.getHeader('x-kept')).toBe('yes');
    expect(res.getHeader('content-security-policy')).toEqual([PROXY_RESPONSE_CSP]);
    const raw = response();
    applyProxyResponseHeaderPolicy(raw);
    raw.writeHead(200, ['Service-Worker-Allowed', '/', 'X-Kept', 'yes']);
    expect(raw.getHeader('service-worker-allowed')).toBeUndefined();
    expect(raw.getHeader('x-kept')).toBe('yes');
  });

  it('keeps host-only cookies and drops those with a Domain attribute', () => {
    expect(widelyScopedCookie('a=1; Path=/; HttpOnly')).toBe(false);
    expect(widelyScopedCookie('a=1; path=/; DOMAIN =example.com')).toBe(true);
    expect(widelyScopedCookie('domain=x; Path=/')).toBe(false);
    const res = response();
    res.setHeader('Set-Cookie', ['a=1; Domain=example.com', 'b=2']);
    enforce(res);
    expect(res.getHeader('set-cookie')).toEqual(['b=2']);
  });

  it('keeps paging links and drops the ones a browser acts on by itself', () => {
    expect(splitLinks('<https://a/?x=1,2>; rel="next; prev", <b>; title="a, b"; rel=last')).toEqual([
      '<https://a/?x=1,2>; rel="next; prev"',
      '<b>; title="a, b"; rel=last',
    ]);
    const res = response();
    res.setHeader('Link', ['<https://a/next>; rel=next, <https://evil/x.js>; rel="preload"; as=script', '<https://evil/s.css>; REL="alternate stylesheet"']);
    enforce(res);
    expect(res.getHeader('link')).toBe('<https://a/next>; rel=next');
    const only = response();
    only.setHeader('Link', '</sw.js>; rel=serviceworker');
    enforce(only);
    expect(only.getHeader('link')).toBeUndefined();
  });
});
