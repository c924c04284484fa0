// The sandbox runtime: the loader.
/* global CustomHttpResponseClass, collectGarbage, ObjectHasOwn, ProxyCtor, ReflectGet, StringToLowerCase, FunctionCtor, G, JSONParse, JSONStringify, MapClear, MapGet,
   ObjectKeys, PromiseCtor, PromiseResolve, PromiseThen, StringIndexOf, StringSlice, define, deliver, describe, fatal,
   fatalFired, limits, makeSvc, newFatal, pending, proxyErrorClasses, proxyErrorInfo,
   requireModule, resetLogLines, runtimeError, timerCallbacks, uncurry */
/* exported control */
let inputJson = null;
let inputBody = '';
function setInput(json, body) {
  inputJson = json;
  inputBody = body;
}

// The transform's values go to the host as they are: the host holds them to the transform contract
// (src/transform-contract.ts: status, headers, the proxy_error body), this runtime only describes what happened.
function errorDescription(title, status, detail, errors) {
  return { ok: false, error: { title: title, status: status, detail: detail, errors: errors } };
}
function runtimeErrorOutcome(detail) {
  return errorDescription('ReactorRuntimeError', 500, detail, {});
}

function okOutcome(result) {
  if (result === null || typeof result !== 'object') {
    throw runtimeError('The transform must return an object such as {body, headers}');
  }
  const out = { ok: true, body: result.body, headers: result.headers };
  if (result.status !== undefined) out.status = result.status;
  return out;
}

function errorOutcome(e) {
  try {
    if (CustomHttpResponseClass !== null && e instanceof CustomHttpResponseClass) {
      return { ok: false, status: e.status, headers: e.headers, body: e.body };
    }
    for (const C of proxyErrorClasses) {
      if (e instanceof C) {
        const info = MapGet(proxyErrorInfo, C);
        let errors = e.errors;
        if (errors === null || typeof errors !== 'object') errors = {};
        return errorDescription(info.title, info.status, describe(e), errors);
      }
    }
    return runtimeErrorOutcome(describe(e));
  } catch (inner) {
    return runtimeErrorOutcome(describe(inner));
  }
}

// The module's exported function, kept after the first load of this context: the host runs later
// invocations of the same tenant and code with 'invoke', which calls it again on new input without
// re-evaluating the module (module-scope state is therefore shared by that tenant's own runs only).
let keptHandler = null;
// Whether the current run ended in a way that leaves this runtime in a known state: a returned
// result, or an error the transform threw on purpose (CustomHttpResponseError, a proxy error).
let runClean = false;

// Per-run state, reset before every run: a previous run's svc answers and timers can no longer be
// delivered (its Invocation has ended) and must not be waited for, counted or fired.
function beginRun() {
  bodyApart = false;
  MapClear(pending);
  MapClear(timerCallbacks);
  resetLogLines();
  runClean = false;
  newFatal();
}

// Whether the host asked for the outcome's body apart (see serializeOutcome); set by each run's input.
let bodyApart = false;

// A body the host passed as it arrived (see the 'r' frame in sandbox-protocol.ts): what the proxy would have
// made of it, the parsed value when it is JSON and parses, else the text; null when empty.
function bodyFrom(field) {
  const kind = StringSlice(field, 0, 1);
  let text = StringSlice(field, 1);
  if (kind === 'J' || kind === 'T') text = JSONParse(text);
  if (typeof text !== 'string' || text === '') return null;
  if (kind !== 'j' && kind !== 'J') return text;
  try {
    return JSONParse(text);
  } catch (_) {
    return text;
  }
}

// Header names stay as the caller sent them; reading one is case-insensitive, as with the platform
// (headers['Authorization'] and headers.authorization are the same header).
function caseInsensitive(headers) {
  function find(target, key) {
    if (typeof key !== 'string' || ObjectHasOwn(target, key)) return key;
    const lower = StringToLowerCase(key);
    for (const name of ObjectKeys(target)) if (StringToLowerCase(name) === lower) return name;
    return key;
  }
  // Writing or deleting a header finds it the same way: `delete headers.authorization` removes an `Authorization` the
  // caller sent (a credential a transform strips must not go on under another spelling).
  return new ProxyCtor(headers, {
    get: function (target, key, receiver) {
      return ReflectGet(target, find(target, key), receiver);
    },
    has: function (target, key) {
      return find(target, key) in target;
    },
    set: function (target, key, value) {
      target[find(target, key)] = value;
      return true;
    },
    deleteProperty: function (target, key) {
      if (typeof key !== 'string') return delete target[key];
      const lower = StringToLowerCase(key);
      for (const name of ObjectKeys(target)) if (StringToLowerCase(name) === lower) delete target[name];
      return true;
    },
  });
}

function requestFrom(json, body) {
  const input = JSONParse(json);
  bodyApart = input.payload === true;
  const args = input.args;
  if (args !== null && typeof args === 'object' && args.headers !== null && typeof args.headers === 'object') {
    args.headers = caseInsensitive(args.headers);
  }
  if (typeof body === 'string' && body !== '' && args !== null && typeof args === 'object') args.body = bodyFrom(body);
  const req = { args: args, configuration: input.configuration };
  if (input.hasSvc) req.svc = makeSvc();
  return req;
}

function isDeliberate(e) {
  if (CustomHttpResponseClass !== null && e instanceof CustomHttpResponseClass) return true;
  for (const C of proxyErrorClasses) if (e instanceof C) return true;
  return false;
}

async function callHandler(handler, req) {
  const returned = handler(req);
  // Not Promise.race: it looks "then" up on the transform's own (patchable) prototypes.
  const result = await new PromiseCtor(function (resolve, reject) {
    PromiseThen(fatal, undefined, reject);
    PromiseThen(PromiseResolve(returned), resolve, reject);
  });
  const outcome = okOutcome(result);
  runClean = true;
  return outcome;
}

function failedOutcome(e) {
  let deliberate = false;
  try {
    deliberate = isDeliberate(e);
  } catch (_) {
    deliberate = false;
  }
  const outcome = errorOutcome(e);
  runClean = deliberate;
  return outcome;
}

async function runTransform(factory) {
  try {
    const req = requestFrom(inputJson, inputBody);
    inputJson = null;
    inputBody = '';
    const module = { exports: {} };
    uncurry(factory)(module.exports, module, module.exports, requireModule);
    const handler = module.exports;
    if (typeof handler !== 'function') {
      throw runtimeError('The transform module must export a function: module.exports = async function (req) { ... }');
    }
    keptHandler = handler;
    return await callHandler(handler, req);
  } catch (e) {
    return failedOutcome(e);
  }
}

async function runKept(json, body) {
  try {
    return await callHandler(keptHandler, requestFrom(json, body));
  } catch (e) {
    return failedOutcome(e);
  }
}

// The outcome with its body apart, when the host asked so: the JSON of the rest, a tab, and 'j' with the
// body's JSON or 't' with its string; the host sends that text as it is. Undefined when the body cannot go
// apart (null or undefined, a value JSON leaves out, a string holding a newline, which would end the frame).
function withBodyApart(outcome) {
  const body = outcome.body;
  if (body === undefined || body === null) return undefined;
  let text;
  if (typeof body === 'string') {
    if (StringIndexOf(body, '\n') !== -1) return undefined;
    text = 't' + body;
  } else {
    const json = JSONStringify(body);
    if (typeof json !== 'string') return undefined;
    text = 'j' + json;
  }
  const head = { ok: outcome.ok, headers: outcome.headers };
  if (outcome.status !== undefined) head.status = outcome.status;
  return JSONStringify(head) + '\t' + text;
}

// The host reads the first character: '1' when the context may run this tenant's code again,
// '0' when it must be disposed (an error the runtime did not expect, a fatal callback, a result it
// refused). The rest is the JSON outcome (or, asked for, the outcome with its body apart).
function serializeOutcome(outcome) {
  const clean = runClean && !fatalFired;
  runClean = false;
  // The common huge result is one giant string: refuse it before serialising doubles it.
  if (typeof outcome.body === 'string' && outcome.body.length > limits.maxResultLength) {
    return '0' + JSONStringify(runtimeErrorOutcome('The transform result exceeds ' + limits.maxResultLength + ' characters'));
  }
  let json;
  try {
    json = bodyApart ? withBodyApart(outcome) : undefined;
    if (json === undefined) json = JSONStringify(outcome);
  } catch (e) {
    return '0' + JSONStringify(runtimeErrorOutcome('The transform result is not JSON-serializable: ' + describe(e)));
  }
  if (typeof json !== 'string' || json.length > limits.maxResultLength) {
    return '0' + JSONStringify(runtimeErrorOutcome('The transform result exceeds ' + limits.maxResultLength + ' characters'));
  }
  return (clean ? '1' : '0') + json;
}

// One-shot: the wrapped tenant script calls it, it removes itself before any tenant code runs. The
// run it starts is taken like one started by 'start'.
define(G, '__gatehouse_load', function load(factory) {
  delete G.__gatehouse_load;
  if (typeof factory !== 'function' || inputJson === null || keptHandler !== null) {
    track('0' + JSONStringify(runtimeErrorOutcome('The transform was loaded twice')));
    return undefined;
  }
  beginRun();
  track(PromiseThen(runTransform(factory), serializeOutcome));
  return undefined;
});

// A later invocation in a context whose first run ended cleanly: same tenant, same code.
function start(json, body) {
  if (keptHandler === null || typeof json !== 'string') {
    track('0' + JSONStringify(runtimeErrorOutcome('The transform is not loaded')));
    return undefined;
  }
  beginRun();
  track(PromiseThen(runKept(json, body), serializeOutcome));
  return undefined;
}

// The host starts a run ('start', or the tenant script calling the loader) in one synchronous call
// under its timeout; the call returns only after the microtasks it queued have run, so a run that
// awaits nothing outside the sandbox has settled by then and 'take' hands over its outcome. 'take'
// answers null while the run still awaits svc answers or timers; 'wait' is then the promise of the
// outcome, awaited without blocking the sandbox process's thread.
let startedRun = null;
let startedOutcome = null;
function track(run) {
  if (typeof run === 'string') {
    startedRun = null;
    startedOutcome = run;
    return;
  }
  startedOutcome = null;
  startedRun = run;
  PromiseThen(run, function (outcome) {
    if (startedRun === run) startedOutcome = outcome;
  });
}
function take() {
  const outcome = startedOutcome;
  if (outcome !== null) {
    startedOutcome = null;
    startedRun = null;
  }
  return outcome;
}
function wait() {
  const run = startedRun;
  startedRun = null;
  startedOutcome = null;
  return run === null ? '0' + JSONStringify(runtimeErrorOutcome('The transform was not started')) : run;
}

// Used at compile time: the Function constructor parses the body on its own, so code that closes
// the CommonJS wrapper early ("}); ...; (function () {") is rejected instead of running outside it.
function checkSource(code) {
  try {
    new FunctionCtor('module', 'exports', 'require', code);
    return null;
  } catch (e) {
    return (e && typeof e.name === 'string' ? e.name + ': ' : '') + describe(e);
  }
}

// The one function the host holds a Reference to, for this context (the joined script returns it).
function control(op, a, b, c) {
  if (op === 'deliver') return deliver(a, b, c);
  if (op === 'input') return setInput(a, b);
  if (op === 'check') return checkSource(a);
  if (op === 'start') return start(a, b);
  if (op === 'take') return take();
  if (op === 'wait') return wait();
  // A full collection, for the host's reading of the heap after a run (SandboxIsolate.checkHeap).
  if (op === 'collect') return collectGarbage === null ? false : (collectGarbage(), true);
  return undefined;
}
