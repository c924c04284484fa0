// The sandbox runtime: errors a transform may throw, as the platform's reactor errors package defines them.
/* global ArrayIsArray, ErrorCtor, JSONStringify, MapCtor, MapSet, NumberIsInteger, ObjectKeys, StringCtor, define,
   lazy, lazyGlobal, limits */
/* exported CustomHttpResponseClass, PROXY_ERROR_TITLE, describe, getReactorErrors, proxyErrorClasses, proxyErrorInfo, runtimeError */
// The title every thrown reactor error answers with (the platform's documented proxy_error body).
const PROXY_ERROR_TITLE = 'One or more validation errors occurred.';
const FALLBACK_ERROR = 'Something went wrong. Please try again.';
// Classes built so far, with their status: only these can have been thrown.
const proxyErrorInfo = new MapCtor();
const proxyErrorClasses = [];
const proxyErrorGetters = {};

function safeStringify(value) {
  const seen = new WeakSet();
  return JSONStringify(value, function (key, v) {
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
    }
    return v;
  });
}
// The constructor's argument as the platform reports it: {error: [messages]}, or each property's messages.
function sanitizeErrors(errors) {
  const out = {};
  const each = function (list) {
    return list.map(function (e) {
      return typeof e === 'object' && e !== null ? safeStringify(e) : e === null || e === undefined ? FALLBACK_ERROR : StringCtor(e);
    });
  };
  try {
    if (ArrayIsArray(errors)) out.error = each(errors);
    else if (errors instanceof ErrorCtor)
      out.error = [errors.message ? StringCtor(errors.message) : errors.name !== 'Error' ? StringCtor(errors.name) : FALLBACK_ERROR];
    else if (errors !== null && typeof errors === 'object') {
      for (const key of ObjectKeys(errors)) {
        const v = errors[key];
        if (ArrayIsArray(v)) out[key] = each(v);
        else if (typeof v === 'object' && v !== null) out[key] = [safeStringify(v)];
        else out[key] = [v ? StringCtor(v) : FALLBACK_ERROR];
      }
    } else if (typeof errors === 'string') out.error = [errors];
    else if (errors) out.error = [StringCtor(errors)];
    else out.error = [FALLBACK_ERROR];
  } catch (_) {
    return { error: [FALLBACK_ERROR] };
  }
  return out;
}

const getBaseError = lazy(function () {
  class BasisTheoryReactorError extends ErrorCtor {
    constructor(spec) {
      const s = spec === null || typeof spec !== 'object' ? {} : spec;
      super(s.message === undefined ? '' : s.message);
      define(this, 'status', s.status);
      define(this, 'errors', sanitizeErrors(s.errors));
    }
    toRFC7807() {
      return { detail: this.message, status: this.status, errors: this.errors };
    }
  }
  define(BasisTheoryReactorError.prototype, 'name', 'BasisTheoryReactorError');
  return BasisTheoryReactorError;
});

for (const spec of limits.proxyErrors) {
  const name = spec.name;
  const status = spec.status;
  const message = spec.message; // the host's PROXY_ERROR_MESSAGES (transform-contract.ts)
  proxyErrorGetters[name] = lazy(function () {
    const Base = getBaseError();
    const C = {
      [name]: class extends Base {
        constructor(errors) {
          super({ message: message, status: status, errors: errors });
        }
      },
    }[name];
    define(C.prototype, 'name', name);
    MapSet(proxyErrorInfo, C, { title: PROXY_ERROR_TITLE, status: status });
    proxyErrorClasses.push(C);
    return C;
  });
  lazyGlobal(name, proxyErrorGetters[name]);
}

// A fault of the transform the runtime reports itself (a result it refuses): a ReactorRuntimeError whose detail is the reason.
const getRuntimeFault = lazy(function () {
  class ReactorRuntimeFault extends ErrorCtor {}
  define(ReactorRuntimeFault.prototype, 'name', 'ReactorRuntimeError');
  return ReactorRuntimeFault;
});
function runtimeError(message) {
  return new (getRuntimeFault())(message);
}

let CustomHttpResponseClass = null;
const getCustomHttpResponseError = lazy(function () {
  class CustomHttpResponseError extends ErrorCtor {
    constructor(response) {
      const r = response === null || typeof response !== 'object' ? {} : response;
      super('Custom HTTP response with status ' + r.status);
      if (!NumberIsInteger(r.status) || r.status < 100 || r.status > 599) throw new ErrorCtor('status is not a valid integer');
      define(this, 'status', r.status);
      define(this, 'headers', r.headers === undefined || r.headers === null ? {} : r.headers);
      define(this, 'body', r.body === undefined || r.body === null ? {} : r.body);
    }
    toResponseBody() {
      return { status: this.status, headers: this.headers, body: this.body };
    }
  }
  define(CustomHttpResponseError.prototype, 'name', 'CustomHttpResponseError');
  CustomHttpResponseClass = CustomHttpResponseError;
  return CustomHttpResponseError;
});
lazyGlobal('CustomHttpResponseError', getCustomHttpResponseError);

// require('@gatehouse/reactor-errors'): the same classes as the globals.
const getReactorErrors = lazy(function () {
  const out = { BasisTheoryReactorError: getBaseError(), CustomHttpResponseError: getCustomHttpResponseError() };
  for (const spec of limits.proxyErrors) out[spec.name] = proxyErrorGetters[spec.name]();
  return out;
});

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
