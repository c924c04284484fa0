// The sandbox runtime: calling the host function, and globals built on first use.
/* global ErrorCtor, G, ObjectDefineProperty, define, host */
/* exported callHost, lazy, lazyGlobal */
function callHost(op, a, b, c, d, ErrorType) {
  const r = host(op, a, b, c, d);
  if (r[0] === true) return r[1];
  throw new (ErrorType || ErrorCtor)(r[1]);
}

// Most contexts run few invocations, and most transforms touch few of these globals: each class is
// built on first access, which keeps a fresh context cheap (measured: about half of its cost).
function lazy(factory) {
  let value = null;
  return function () {
    return value === null ? (value = factory()) : value;
  };
}
function lazyGlobal(name, get) {
  ObjectDefineProperty(G, name, {
    configurable: true,
    enumerable: false,
    get: function () {
      const v = get();
      define(G, name, v);
      return v;
    },
    set: function (v) {
      define(G, name, v);
    },
  });
}
