// The sandbox runtime: require() and the module registry.
/* global ErrorCtor, G, ObjectCreate, MapCtor, MapGet, MapSet, ObjectFreeze, ObjectKeys, StringCtor, StringIndexOf, StringSlice, SUBPATH_MODULES,
   callHost, define, extendQuerystring, extendUtil, getBuffer, getCrypto, getHttp, getHttps, getProcess, getReactorErrors, getZlib, lazy, limits */
/* exported requireModule */
// name -> function answering the module's exports (each builds them once per context).
const moduleLoaders = new MapCtor();
function registerModule(name, load) {
  MapSet(moduleLoaders, name, load);
}

// ---------------------------------------------------------------- the registry: one line a module
registerModule(
  'buffer',
  lazy(function () {
    const Buffer = getBuffer();
    return {
      Buffer: Buffer,
      SlowBuffer: Buffer,
      kMaxLength: limits.maxBufferLength,
      constants: { MAX_LENGTH: limits.maxBufferLength },
      atob: G.atob,
      btoa: G.btoa,
    };
  }),
);
registerModule('crypto', getCrypto);
registerModule('zlib', getZlib);
registerModule('process', getProcess);
registerModule(
  'timers',
  lazy(function () {
    return {
      setTimeout: G.setTimeout,
      clearTimeout: G.clearTimeout,
      setInterval: G.setInterval,
      clearInterval: G.clearInterval,
      setImmediate: G.setImmediate,
      clearImmediate: G.clearImmediate,
    };
  }),
);
registerModule(
  'os',
  lazy(function () {
    return ObjectFreeze({
      EOL: '\n',
      platform: function () {
        return 'linux';
      },
      type: function () {
        return 'Linux';
      },
      arch: function () {
        return 'x64';
      },
      release: function () {
        return '';
      },
      hostname: function () {
        return 'sandbox';
      },
      tmpdir: function () {
        return '/tmp';
      },
      homedir: function () {
        return '/';
      },
      endianness: function () {
        return 'LE';
      },
      cpus: function () {
        return [];
      },
      totalmem: function () {
        return 0;
      },
      freemem: function () {
        return 0;
      },
    });
  }),
);
registerModule(
  'tty',
  lazy(function () {
    function Stream() {
      this.isTTY = false;
    }
    return {
      isatty: function isatty() {
        return false;
      },
      ReadStream: Stream,
      WriteStream: Stream,
    };
  }),
);
registerModule('@gatehouse/reactor-errors', getReactorErrors);
registerModule('http', getHttp);
registerModule('https', getHttps);

// Built-in modules from the ecosystem's polyfills and the allowlisted packages, bundled at build time
// (scripts/build-sandbox-modules.js): the sandbox process runs the bundle in this context on first require.
// Some get what their polyfill lacks of Node's behaviour (runtime/node-extras.js) before anyone sees them.
const EXTEND = { util: extendUtil, querystring: extendQuerystring };
for (const name of limits.modules) if (MapGet(moduleLoaders, name) === undefined) registerModule(name, bundled(name, EXTEND[name]));
// Node's sub-path modules (runtime/node-subpaths.js), each there when the module it is part of is.
for (const name of ObjectKeys(SUBPATH_MODULES)) {
  if (MapGet(moduleLoaders, StringSlice(name, 0, StringIndexOf(name, '/'))) !== undefined) registerModule(name, SUBPATH_MODULES[name]);
}

// What a transform may not require, and why (the error names the reason). A package that requires one of
// Node's built-ins gets, instead of an error at load, a stand-in whose functions throw that reason when used.
const NO_FILES = 'a transform has no file system';
const NO_SOCKETS = 'a transform has no raw sockets (outbound HTTP goes through fetch, http and https)';
const NO_PROCESSES = 'a transform cannot start processes or threads';
const REFUSED = {
  fs: NO_FILES,
  'fs/promises': NO_FILES,
  module: NO_FILES,
  net: NO_SOCKETS,
  tls: NO_SOCKETS,
  dgram: NO_SOCKETS,
  dns: NO_SOCKETS,
  http2: NO_SOCKETS,
  child_process: NO_PROCESSES,
  cluster: NO_PROCESSES,
  worker_threads: NO_PROCESSES,
  vm: 'a transform cannot create JavaScript contexts',
  v8: 'the engine is not exposed',
  inspector: 'the engine is not exposed',
  async_hooks: 'the engine is not exposed',
  perf_hooks: 'the engine is not exposed',
  readline: NO_FILES,
  repl: NO_FILES,
  domain: 'deprecated in Node and not provided',
  // Packages the platform lists that need what a sandbox cannot give.
  ssh2: 'it opens raw TCP sockets, which a transform has not',
  'aws-sdk': 'it reads credentials and configuration from the file system and the host environment',
  'tesseract.js': 'it runs WebAssembly in worker threads and loads language data from files or the network',
  dropbox: 'it is not bundled: its client requires the host environment fetch and file streams',
};

function notFound(name, why) {
  const e = new ErrorCtor("Cannot find module '" + name + "'" + (why === undefined ? '' : ': ' + why));
  define(e, 'code', 'MODULE_NOT_FOUND');
  return e;
}

function canonical(name) {
  return typeof name === 'string' && StringSlice(name, 0, 5) === 'node:' ? StringSlice(name, 5) : name;
}

function requireModule(name) {
  const key = canonical(name);
  const load = typeof key === 'string' ? MapGet(moduleLoaders, key) : undefined;
  if (load !== undefined) return load();
  const text = StringCtor(name);
  throw notFound(text, typeof key === 'string' && REFUSED[key] !== undefined ? REFUSED[key] : undefined);
}

// A package's own require: like a transform's, except that a refused built-in answers an empty module, as bundlers map
// them for the browser (packages require fs or net at load for features a transform never reaches, and test for them).
const PACKAGE_ONLY = {
  module: function () {
    return {
      createRequire: function createRequire() {
        return packageRequire;
      },
      builtinModules: [],
    };
  },
};
function packageRequire(name) {
  const key = canonical(name);
  const load = typeof key === 'string' ? MapGet(moduleLoaders, key) : undefined;
  if (load !== undefined) return load();
  if (typeof key !== 'string' || REFUSED[key] === undefined) throw notFound(StringCtor(name));
  let standIn = MapGet(standIns, key);
  if (standIn === undefined) {
    standIn = PACKAGE_ONLY[key] === undefined ? {} : PACKAGE_ONLY[key]();
    MapSet(standIns, key, standIn);
  }
  return standIn;
}
const standIns = new MapCtor();
// What packages read off require besides calling it.
define(packageRequire, 'resolve', function resolve(name) {
  return StringCtor(name);
});
define(packageRequire, 'cache', ObjectCreate(null));

// The exports are kept before the module runs: a package that requires itself back (a cycle) gets them as they are.
function bundled(name, extend) {
  let module = null;
  return function () {
    if (module !== null) return module.exports;
    let factory = null;
    define(G, '__gatehouse_module', function (f) {
      factory = f;
    });
    try {
      callHost('module', name);
    } finally {
      delete G.__gatehouse_module;
    }
    if (typeof factory !== 'function') throw new ErrorCtor("The module '" + name + "' did not load");
    const loading = { exports: {} };
    module = loading;
    try {
      factory.call(loading.exports, loading.exports, packageRequire, loading, '/node_modules/' + name + '/index.js', '/node_modules/' + name);
      if (extend !== undefined) loading.exports = extend(loading.exports);
    } catch (e) {
      module = null;
      throw e;
    }
    return loading.exports;
  };
}
