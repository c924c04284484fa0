// The sandbox runtime: builtins that outrun the heap limit.
/* global ArrayIsArray, G, MapCtor, MathFloor, MathMax, MathMin, ObjectDefineProperty, ObjectGetOwnPropertyDescriptor, RangeErrorCtor,
   SetCtor, StringCtor, TypeErrorCtor, define, limits */
/* exported ProxyCtor, ReflectGet */
// isolated-vm enforces the heap limit by terminating the isolate, which V8 only notices between
// JavaScript steps. These builtins can allocate gigabytes inside one uninterruptible call and abort
// the whole host process (isolated-vm issues #107 and #186): their sizes are checked first, or the
// work is done in JavaScript, where termination is noticed.
const ReflectApply = Reflect.apply;
const ObjectCtor = Object;
const ArrayCtor = Array;
const SymbolIterator = Symbol.iterator;
const SymbolIsConcatSpreadable = Symbol.isConcatSpreadable;
const MathTrunc = Math.trunc;
const maxElements = limits.maxElements;
function tooLarge(what) {
  return new RangeErrorCtor(what + ' exceeds the sandbox limit of ' + maxElements + ' elements');
}
function toLength(v) {
  const n = +v;
  if (!(n > 0)) return 0;
  return n === Infinity ? 9007199254740991 : MathFloor(n);
}
function relativeIndex(v, dflt, len) {
  if (v === undefined) return dflt;
  let n = MathTrunc(+v);
  if (n !== n) n = 0;
  return n < 0 ? MathMax(len + n, 0) : MathMin(n, len);
}
// The replacement keeps the builtin's name, not its exact 'length' (redefining that on every
// function measurably slows down creating each context).
function replaceMethod(target, key, name, impl) {
  define(
    target,
    key,
    {
      [name]: function () {
        return ReflectApply(impl, this, arguments);
      },
    }[name],
  );
}
// Done in JavaScript: every size is read once, and a getter cannot grow it after the check.
replaceMethod(Array.prototype, 'fill', 'fill', function (value, start, end) {
  const O = ObjectCtor(this);
  const len = toLength(O.length);
  const from = relativeIndex(start, 0, len);
  const to = relativeIndex(end, len, len);
  if (to - from > maxElements) throw tooLarge('Array.prototype.fill');
  for (let k = from; k < to; k++) O[k] = value;
  return O;
});
const ArrayFrom = Array.from;
replaceMethod(Array, 'from', 'from', function (items, mapFn, thisArg) {
  if (mapFn !== undefined && typeof mapFn !== 'function') throw new TypeErrorCtor(StringCtor(mapFn) + ' is not a function');
  if (items === null || items === undefined) throw new TypeErrorCtor('Array.from requires an array-like object');
  const out = [];
  let n = 0;
  if (typeof items === 'string' && items.length > maxElements) throw tooLarge('Array.from');
  const iterator = items[SymbolIterator];
  if (iterator !== undefined && iterator !== null) {
    for (const v of items) {
      out[n] = mapFn === undefined ? v : ReflectApply(mapFn, thisArg, [v, n]);
      n++;
    }
  } else {
    const O = ObjectCtor(items);
    const len = toLength(O.length);
    if (len > maxElements) throw tooLarge('Array.from');
    for (; n < len; n++) out[n] = mapFn === undefined ? O[n] : ReflectApply(mapFn, thisArg, [O[n], n]);
  }
  // A subclass receiver gets its own instance, built from the checked copy.
  return this === ArrayCtor || this === undefined || this === G ? out : ReflectApply(ArrayFrom, this, [out]);
});
// split honours a limit: cap it, then tell a capped result apart from a complete one.
function guardSplit(target, key, name, what) {
  const original = target[key];
  replaceMethod(target, key, name, function (separator, limit) {
    const requested = limit === undefined ? 4294967295 : limit >>> 0;
    const parts = ReflectApply(original, this, [separator, MathMin(requested, maxElements + 1)]);
    if (parts.length > maxElements && requested > maxElements) throw tooLarge(what);
    return parts;
  });
}
guardSplit(String.prototype, 'split', 'split', 'String.prototype.split');
guardSplit(RegExp.prototype, Symbol.split, '[Symbol.split]', 'RegExp split');

// Array methods walk every index up to length inside the builtin, holes included: on a sparse
// array of length 1e9 that is minutes of uninterruptible work. Arrays longer than a full heap are
// refused instead. A Proxy could report one length to the check and another to the builtin, so
// transforms get no Proxy, and array-likes are seen through one whose length is the checked one.
const ProxyCtor = Proxy;
const ReflectGet = Reflect.get;
// Packages need Proxy (xmlbuilder2's DOM): transforms get one that cannot wrap an array (nor a proxy of one), so
// anything Array.isArray accepts has the length the checks below read.
function checkedProxyTarget(target) {
  if (ArrayIsArray(target)) throw new TypeErrorCtor('A Proxy of an array is not available in the sandbox');
  return target;
}
const SandboxProxy = {
  Proxy: function Proxy(target, handler) {
    if (new.target === undefined) throw new TypeErrorCtor("Constructor Proxy requires 'new'");
    return new ProxyCtor(checkedProxyTarget(target), handler);
  },
}.Proxy;
define(SandboxProxy, 'revocable', function revocable(target, handler) {
  return ProxyCtor.revocable(checkedProxyTarget(target), handler);
});
define(G, 'Proxy', SandboxProxy);
function withFixedLength(O, len) {
  return new ProxyCtor(O, {
    get: function (target, key, receiver) {
      return key === 'length' ? len : ReflectGet(target, key, receiver);
    },
  });
}
// concat walks its arguments too, when they are arrays or spreadable array-likes.
function concatArguments(args) {
  const out = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg !== null && typeof arg === 'object' && (ArrayIsArray(arg) || arg[SymbolIsConcatSpreadable])) {
      const len = toLength(arg.length);
      if (len > maxElements) throw tooLarge('Array.prototype.concat');
      out[i] = ArrayIsArray(arg) ? arg : withFixedLength(arg, len);
    } else {
      out[i] = arg;
    }
  }
  return out;
}
const ARRAY_METHODS = [
  'at',
  'concat',
  'copyWithin',
  'every',
  'filter',
  'find',
  'findIndex',
  'findLast',
  'findLastIndex',
  'flat',
  'flatMap',
  'forEach',
  'includes',
  'indexOf',
  'join',
  'lastIndexOf',
  'map',
  'pop',
  'push',
  'reduce',
  'reduceRight',
  'reverse',
  'shift',
  'slice',
  'some',
  'sort',
  'splice',
  'toLocaleString',
  'toReversed',
  'toSorted',
  'toSpliced',
  'toString',
  'unshift',
  'with',
];
for (const name of ARRAY_METHODS) {
  const original = Array.prototype[name];
  if (typeof original !== 'function') continue;
  replaceMethod(Array.prototype, name, name, function () {
    if (this === null || this === undefined) return ReflectApply(original, this, arguments);
    const args = name === 'concat' ? concatArguments(arguments) : arguments;
    const O = ObjectCtor(this);
    if (ArrayIsArray(O)) {
      if (O.length > maxElements) throw tooLarge('Array.prototype.' + name);
      return ReflectApply(original, O, args);
    }
    const len = toLength(O.length);
    if (len > maxElements) throw tooLarge('Array.prototype.' + name);
    const view = withFixedLength(O, len);
    const result = ReflectApply(original, view, args);
    return result === view ? O : result;
  });
}
// Strings a builtin would build in one allocation, far beyond the heap.
const maxStringLength = limits.maxStringLength;
const StringRepeat = String.prototype.repeat;
replaceMethod(String.prototype, 'repeat', 'repeat', function (count) {
  const str = StringCtor(this);
  const n = MathTrunc(+count) || 0;
  if (str.length * n > maxStringLength) throw new RangeErrorCtor('Invalid string length');
  return ReflectApply(StringRepeat, str, [n]);
});
for (const name of ['padStart', 'padEnd']) {
  const original = String.prototype[name];
  replaceMethod(String.prototype, name, name, function (maxLength, fill) {
    const n = toLength(maxLength);
    if (n > maxStringLength) throw new RangeErrorCtor('Invalid string length');
    return ReflectApply(original, this, [n, fill]);
  });
}
// Filling a collection from an iterable in JavaScript rather than in one builtin call.
function guardCollection(Base, keyed) {
  const adderName = keyed ? 'set' : 'add';
  const Guarded = {
    [Base.name]: class extends Base {
      constructor(iterable) {
        super();
        if (iterable === undefined || iterable === null) return;
        const adder = this[adderName];
        if (typeof adder !== 'function') throw new TypeErrorCtor("'" + adderName + "' is not a function");
        for (const item of iterable) {
          if (!keyed) {
            ReflectApply(adder, this, [item]);
            continue;
          }
          if (item === null || (typeof item !== 'object' && typeof item !== 'function')) {
            throw new TypeErrorCtor('Iterator value ' + StringCtor(item) + ' is not an entry object');
          }
          ReflectApply(adder, this, [item[0], item[1]]);
        }
      }
    },
  }[Base.name];
  // What code reads off the prototype itself (get-intrinsic reads Map.prototype.size's descriptor) stays as it was.
  const size = ObjectGetOwnPropertyDescriptor(Base.prototype, 'size');
  if (size !== undefined) ObjectDefineProperty(Guarded.prototype, 'size', size);
  define(G, Base.name, Guarded);
}
guardCollection(Set, false);
guardCollection(WeakSet, false);
guardCollection(Map, true);
guardCollection(WeakMap, true);
// Growing a Map or Set near the heap limit makes V8 fail the allocation of its next hash table
// outright, which isolated-vm can only answer by parking the isolate's thread for good (measured:
// a Set of integers in a 64 MiB isolate). Far below that size, entries are refused instead.
const maxCollectionEntries = limits.maxCollectionEntries;
for (const spec of [
  [MapCtor.prototype, 'set'],
  [SetCtor.prototype, 'add'],
]) {
  const proto = spec[0],
    key = spec[1];
  const original = proto[key];
  const has = proto.has;
  const size = ObjectGetOwnPropertyDescriptor(proto, 'size').get;
  replaceMethod(proto, key, key, function (k) {
    if (ReflectApply(size, this, []) >= maxCollectionEntries && !ReflectApply(has, this, [k])) {
      throw new RangeErrorCtor((key === 'set' ? 'Map' : 'Set') + ' exceeds the sandbox limit of ' + maxCollectionEntries + ' entries');
    }
    return ReflectApply(original, this, arguments);
  });
}
