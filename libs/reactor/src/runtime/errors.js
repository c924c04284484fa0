// The sandbox runtime: errors a transform may throw.
/* global ErrorCtor, MapCtor, MapSet, StringCtor, define, lazy, lazyGlobal, limits */
/* exported CustomHttpResponseClass, describe, proxyErrorClasses, proxyErrorInfo, runtimeError */
// Classes built so far, with their status: only these can have been thrown.
const proxyErrorInfo = new MapCtor();
const proxyErrorClasses = [];
const proxyErrorGetters = {};
for (const spec of limits.proxyErrors) {
  const name = spec.name;
  const status = spec.status;
  proxyErrorGetters[name] = lazy(function () {
    const C = ({ [name]: class extends ErrorCtor {
      constructor(message, errors) {
        super(message === undefined ? '' : message);
        define(this, 'status', status);
        define(this, 'errors', errors === undefined || errors === null ? {} : errors);
      }
    } })[name];
    define(C.prototype, 'name', name);
    MapSet(proxyErrorInfo, C, { title: name, status: status });
    proxyErrorClasses.push(C);
    return C;
  });
  lazyGlobal(name, proxyErrorGetters[name]);
}
function runtimeError(message) {
  return new (proxyErrorGetters.ReactorRuntimeError())(message);
}

let CustomHttpResponseClass = null;
const getCustomHttpResponseError = lazy(function () {
  class CustomHttpResponseError extends ErrorCtor {
    constructor(response) {
      const r = response === null || typeof response !== 'object' ? {} : response;
      super('Custom HTTP response with status ' + r.status);
      define(this, 'status', r.status);
      define(this, 'headers', r.headers === undefined || r.headers === null ? {} : r.headers);
      define(this, 'body', r.body);
    }
  }
  define(CustomHttpResponseError.prototype, 'name', 'CustomHttpResponseError');
  CustomHttpResponseClass = CustomHttpResponseError;
  return CustomHttpResponseError;
});
lazyGlobal('CustomHttpResponseError', getCustomHttpResponseError);

function describe(e) {
  try {
    if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
      const m = e.message;
      if (typeof m === 'string') return m;
    }
    return StringCtor(e);
  } catch (_) {
    return 'The transform threw a value that cannot be described';
  }
}
