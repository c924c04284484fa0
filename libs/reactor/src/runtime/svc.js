// The sandbox runtime: svc client.
/* global ArrayIsArray, ErrorCtor, JSONParse, JSONStringify, MapDelete, MapSet, ObjectHasOwn, ObjectKeys, PromiseCtor,
   StringCtor, TypeErrorCtor, define, host, lazy, nextPendingId:writable, pending */
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
        define(e, 'data', null);
        reject(e);
      } else if (r.status >= 200 && r.status < 300) {
        resolve(r.body);
      } else {
        const detail = r.body !== null && typeof r.body === 'object' && typeof r.body.detail === 'string' ? ': ' + r.body.detail : '';
        const e = new (getSvcRequestError())(method + ' ' + path + ' responded ' + r.status + detail);
        define(e, 'status', r.status);
        define(e, 'body', r.body);
        // The platform's client names the answer's body `data` (its BasisTheoryApiError): both are here.
        define(e, 'data', r.body);
        reject(e);
      }
    });
    const started = host('svc', id, request);
    if (started[0] !== true) {
      MapDelete(pending, id);
      throw new ErrorCtor(started[1]);
    }
  });
}
function makeSvc() {
  const seg = function (id) {
    return '/' + encodeURIComponent(StringCtor(id));
  };
  return {
    request: svcRequest,
    applications: {
      list: function (query) {
        return svcRequest({ method: 'GET', path: '/applications', query: query });
      },
      get: function (id) {
        return svcRequest({ method: 'GET', path: '/applications' + seg(id) });
      },
      create: function (body) {
        return svcRequest({ method: 'POST', path: '/applications', body: body });
      },
      update: function (id, body) {
        return svcRequest({ method: 'PUT', path: '/applications' + seg(id), body: body });
      },
      delete: function (id) {
        return svcRequest({ method: 'DELETE', path: '/applications' + seg(id) });
      },
      regenerate: function (id) {
        return svcRequest({ method: 'POST', path: '/applications' + seg(id) + '/regenerate' });
      },
    },
    proxies: {
      list: function (query) {
        return svcRequest({ method: 'GET', path: '/proxies', query: query });
      },
      get: function (id) {
        return svcRequest({ method: 'GET', path: '/proxies' + seg(id) });
      },
      create: function (body) {
        return svcRequest({ method: 'POST', path: '/proxies', body: body });
      },
      update: function (id, body) {
        return svcRequest({ method: 'PUT', path: '/proxies' + seg(id), body: body });
      },
      patch: function (id, body) {
        return svcRequest({ method: 'PATCH', path: '/proxies' + seg(id), body: body });
      },
      delete: function (id) {
        return svcRequest({ method: 'DELETE', path: '/proxies' + seg(id) });
      },
    },
    logs: {
      list: function (query) {
        return svcRequest({ method: 'GET', path: '/logs', query: query });
      },
    },
    tokens: {
      create: function (body) {
        return svcRequest({ method: 'POST', path: '/tokens', body: snakeTokenRequest(body) }).then(withCamelAliases);
      },
      retrieve: function (id) {
        return svcRequest({ method: 'GET', path: '/tokens' + seg(id) }).then(withCamelAliases);
      },
      update: function (id, body) {
        return svcRequest({ method: 'PATCH', path: '/tokens' + seg(id), body: snakeTokenRequest(body) }).then(withCamelAliases);
      },
      delete: function (id) {
        return svcRequest({ method: 'DELETE', path: '/tokens' + seg(id) });
      },
      list: function (query) {
        return svcRequest({ method: 'GET', path: '/v2/tokens', query: tokenQuery(query) }).then(withCamelAliases);
      },
    },
    tokenize: function (body) {
      return svcRequest({ method: 'POST', path: '/tokenize', body: snakeTokenRequests(body) });
    },
    detokenize: function (body) {
      return svcRequest({ method: 'POST', path: '/detokenize', body: body });
    },
  };
}

// The platform's JS client takes a token request's members in camelCase as well (it converts them, never inside
// `data`, `metadata` or `mask`): the API's snake_case names, written either way. A member given both ways is left for
// the API to refuse.
const TOKEN_REQUEST_CAMEL = { expiresAt: 'expires_at', deduplicateToken: 'deduplicate_token', fingerprintExpression: 'fingerprint_expression' };
function snakeTokenRequest(body) {
  if (body === null || typeof body !== 'object' || ArrayIsArray(body)) return body;
  const out = {};
  for (const key of ObjectKeys(body)) {
    const snake = ObjectHasOwn(TOKEN_REQUEST_CAMEL, key) ? TOKEN_REQUEST_CAMEL[key] : undefined;
    out[snake !== undefined && !ObjectHasOwn(body, snake) ? snake : key] = body[key];
  }
  return out;
}
// tokenize: every object with `type` and `data` is a token request, wherever it is; the rest is the caller's shape.
function snakeTokenRequests(value) {
  if (ArrayIsArray(value)) return value.map(snakeTokenRequests);
  if (value === null || typeof value !== 'object') return value;
  if (ObjectHasOwn(value, 'type') && ObjectHasOwn(value, 'data')) return snakeTokenRequest(value);
  const out = {};
  for (const key of ObjectKeys(value)) out[key] = snakeTokenRequests(value[key]);
  return out;
}
// list({container, type, fingerprint, metadata: {k: v}, size, start}): metadata becomes metadata.<k> filters.
function tokenQuery(query) {
  if (query === null || typeof query !== 'object') return query;
  const out = {};
  for (const key of ObjectKeys(query)) {
    const value = query[key];
    if (key === 'metadata' && value !== null && typeof value === 'object') {
      for (const name of ObjectKeys(value)) out['metadata.' + name] = value[name];
    } else out[key] = value;
  }
  return out;
}
// Answers keep the API's snake_case members; the camelCase names the platform's client answers with are readable too
// (not enumerable, so JSON.stringify and spreads give the API's shape).
function camelName(name) {
  return name.replace(/_([a-z])/g, function (_, c) {
    return c.toUpperCase();
  });
}
function withCamelAliases(answer) {
  if (answer === null || typeof answer !== 'object') return answer;
  const each = ArrayIsArray(answer.data) && answer.pagination !== undefined ? answer.data.concat([answer.pagination]) : [answer];
  for (const item of each) {
    if (item === null || typeof item !== 'object') continue;
    for (const key of ObjectKeys(item)) {
      const camel = key[0] === '_' ? key : camelName(key);
      if (camel !== key && !ObjectHasOwn(item, camel)) define(item, camel, item[key]);
    }
  }
  return answer;
}
