// The sandbox runtime: the intrinsics it keeps, the globals it removes, and `define`. First of the files joined into one
// script by sandbox-runtime.ts, all inside `(function install(host, limitsJson) { ... })`: see RUNTIME_FILES there.
/* global limitsJson */
/* exported ArrayIsArray, ErrorCtor, FunctionCtor, G, JSONParse, JSONStringify, MapClear, MapCtor, MapDelete, MapGet,
   MapSet, MathFloor, MathMax, MathMin, NumberIsInteger, ObjectCreate, ObjectDefineProperty, ObjectFreeze,
   ObjectGetOwnPropertyDescriptor, ObjectSetPrototypeOf, ObjectHasOwn, ObjectKeys, ObjectPrototypeToString, PromiseCtor, PromiseResolve, PromiseThen,
   RangeErrorCtor, SetCtor, StringCtor, StringFromCharCode, StringIndexOf, StringSlice, StringToLowerCase, TypeErrorCtor, U8, WeakMapCtor, WeakMapGet,
   WeakMapSet, collectGarbage, define, limits, uncurry */
const G = globalThis;
const limits = JSON.parse(limitsJson);

// Intrinsics captured before tenant code runs: a transform that patches builtins only breaks itself,
// never the loader that reports its outcome.
const uncurry = Function.prototype.call.bind.bind(Function.prototype.call);
const FunctionCtor = Function;
const ObjectCreate = Object.create;
const ObjectDefineProperty = Object.defineProperty;
const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const ObjectSetPrototypeOf = Object.setPrototypeOf;
const ObjectKeys = Object.keys;
const ObjectHasOwn = Object.hasOwn;
const StringToLowerCase = uncurry(String.prototype.toLowerCase);
const ObjectFreeze = Object.freeze;
const ObjectPrototypeToString = uncurry(Object.prototype.toString);
const ArrayIsArray = Array.isArray;
const JSONStringify = JSON.stringify;
const JSONParse = JSON.parse;
const PromiseCtor = Promise;
const PromiseResolve = Promise.resolve.bind(Promise);
const PromiseThen = uncurry(Promise.prototype.then);
const MapCtor = Map;
const SetCtor = Set;
const MapGet = uncurry(Map.prototype.get);
const MapSet = uncurry(Map.prototype.set);
const MapDelete = uncurry(Map.prototype.delete);
const MapClear = uncurry(Map.prototype.clear);
const WeakMapCtor = WeakMap;
const WeakMapGet = uncurry(WeakMap.prototype.get);
const WeakMapSet = uncurry(WeakMap.prototype.set);
const StringCtor = String;
const StringSlice = uncurry(String.prototype.slice);
const StringIndexOf = uncurry(String.prototype.indexOf);
const StringFromCharCode = String.fromCharCode;
const ErrorCtor = Error;
const TypeErrorCtor = TypeError;
const RangeErrorCtor = RangeError;
const U8 = Uint8Array;
const MathMin = Math.min;
const MathMax = Math.max;
const MathFloor = Math.floor;
const NumberIsInteger = Number.isInteger;

function define(target, name, value) {
  ObjectDefineProperty(target, name, { value: value, writable: true, configurable: true, enumerable: false });
}

// Nothing a transform needs, and each widens the attack surface (JIT-compiled wasm, shared memory,
// Atomics.wait blocking the isolate thread).
delete G.WebAssembly;
delete G.SharedArrayBuffer;
delete G.Atomics;
// V8 flags of the host process apply to every isolate: the sandbox process's --expose-gc would hand
// transforms a gc() that stalls the isolate. The runtime keeps it for the host alone (control's
// 'collect': the heap judged after a collection, SandboxIsolate.checkHeap). Standard lowercase globals
// are few; anything else goes (or, when V8 made it non-configurable, as gc is, is overwritten).
const collectGarbage = typeof G.gc === 'function' ? G.gc : null;
const STANDARD_LOWERCASE = [
  'globalThis',
  'undefined',
  'parseInt',
  'parseFloat',
  'isNaN',
  'isFinite',
  'decodeURI',
  'decodeURIComponent',
  'encodeURI',
  'encodeURIComponent',
  'escape',
  'unescape',
  'eval',
  'console',
];
for (const name of Object.getOwnPropertyNames(G)) {
  const first = name.charCodeAt(0);
  if (first < 97 || first > 122 || STANDARD_LOWERCASE.indexOf(name) !== -1) continue;
  if (!Reflect.deleteProperty(G, name)) {
    try {
      G[name] = undefined;
    } catch (_) {
      /* read-only as well: nothing more can be done */
    }
  }
}
define(G, 'global', G);
