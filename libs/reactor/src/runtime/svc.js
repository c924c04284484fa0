// The sandbox runtime: svc client.
/* global ArrayIsArray, ErrorCtor, JSONParse, JSONStringify, MapDelete, MapSet, ObjectKeys, PromiseCtor, StringCtor,
   TypeErrorCtor, define, host, lazy, nextPendingId:writable, pending */
/* exported makeSvc */
const getSvcRequestError = lazy(function () {
  class SvcRequestError extends ErrorCtor {}
  define(SvcRequestError.prototype, 'name', 'SvcRequestError');
  return SvcRequestError;
});
const SVC_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function svcRequest(options) {
  return new PromiseCtor(function (resolve, reject) {
    if (options === null || typeof options !== 'object') throw new TypeErrorCtor('svc.request expects {method, path, body, query}');
    const method = StringCtor(options.method === undefined ? 'GET' : options.method).toUpperCase();
    const path = StringCtor(options.path);
    if (SVC_METHODS.indexOf(method) === -1) throw new TypeErrorCtor('svc.request: unsupported method ' + method);
    if (path[0] !== '/') throw new TypeErrorCtor('svc.request: path must start with "/"');
    const query = {};
    if (options.query !== undefined && options.query !== null) {
      for (const key of ObjectKeys(options.query)) {
        const v = options.query[key];
        if (v === undefined || v === null) continue;
        query[key] = ArrayIsArray(v) ? v.map(StringCtor) : StringCtor(v);
      }
    }
    const request = JSONStringify({ method: method, path: path, body: options.body, query: query });
    const id = nextPendingId++;
    MapSet(pending, id, function (payload) {
      const r = JSONParse(payload);
      if (r.error !== undefined) {
        const e = new (getSvcRequestError())(method + ' ' + path + ' failed: ' + r.error);
        define(e, 'status', typeof r.status === 'number' ? r.status : 502);
        define(e, 'body', null);
        reject(e);
      } else if (r.status >= 200 && r.status < 300) {
        resolve(r.body);
      } else {
        const detail = r.body !== null && typeof r.body === 'object' && typeof r.body.detail === 'string' ? ': ' + r.body.detail : '';
        const e = new (getSvcRequestError())(method + ' ' + path + ' responded ' + r.status + detail);
        define(e, 'status', r.status);
        define(e, 'body', r.body);
        reject(e);
      }
    });
    const started = host('svc', id, request);
    if (started[0] !== true) { MapDelete(pending, id); throw new ErrorCtor(started[1]); }
  });
}
function makeSvc() {
  const seg = function (id) { return '/' + encodeURIComponent(StringCtor(id)); };
  return {
    request: svcRequest,
    applications: {
      list: function (query) { return svcRequest({ method: 'GET', path: '/applications', query: query }); },
      get: function (id) { return svcRequest({ method: 'GET', path: '/applications' + seg(id) }); },
      create: function (body) { return svcRequest({ method: 'POST', path: '/applications', body: body }); },
      update: function (id, body) { return svcRequest({ method: 'PUT', path: '/applications' + seg(id), body: body }); },
      delete: function (id) { return svcRequest({ method: 'DELETE', path: '/applications' + seg(id) }); },
      regenerate: function (id) { return svcRequest({ method: 'POST', path: '/applications' + seg(id) + '/regenerate' }); },
    },
    proxies: {
      list: function (query) { return svcRequest({ method: 'GET', path: '/proxies', query: query }); },
      get: function (id) { return svcRequest({ method: 'GET', path: '/proxies' + seg(id) }); },
      create: function (body) { return svcRequest({ method: 'POST', path: '/proxies', body: body }); },
      update: function (id, body) { return svcRequest({ method: 'PUT', path: '/proxies' + seg(id), body: body }); },
      patch: function (id, body) { return svcRequest({ method: 'PATCH', path: '/proxies' + seg(id), body: body }); },
      delete: function (id) { return svcRequest({ method: 'DELETE', path: '/proxies' + seg(id) }); },
    },
    logs: {
      list: function (query) { return svcRequest({ method: 'GET', path: '/logs', query: query }); },
    },
  };
}
