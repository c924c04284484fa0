#!/usr/bin/env node
'use strict';
// Bundles what transforms may `require` besides the runtime's own modules: Node's built-in modules that the
// ecosystem's polyfills cover (node-stdlib-browser 1.3.1's map: events, util, stream, path, ...) and the platform's
// allowlisted packages, at the versions package-lock.json pins. Each becomes one script in dist/sandbox-modules that a
// sandbox process compiles once, on the first `require` of it, and runs in the context that asked
// (libs/reactor/src/sandbox-modules.ts). Node's built-in modules stay external in every bundle: a package's
// `require('buffer')` reaches the sandbox's own registry (libs/reactor/src/runtime/modules.js), so every package
// shares the runtime's Buffer, crypto and zlib, which run natively in the sandbox process.
//
// Then it makes their V8 code caches (libs/reactor/src/module-code-cache.ts), so that a sandbox process loads a bundle's
// bytecode instead of compiling it on the first `require`.
//
// Run by `npm run build` (scripts/build.js); `--if-stale` rebuilds the bundles only when package-lock.json or this
// script is newer than the manifest, and the code caches only when they are missing, older than the bundles, or made by
// another V8. `--code-cache-only` makes the code caches alone (when stale): the image runs it with its own Node, which
// may not be the one that built (see the Dockerfile).
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { builtinModules } = require('node:module');
const { dirname, join } = require('node:path');

const root = join(__dirname, '..');
const out = join(root, 'dist', 'sandbox-modules');
const manifestPath = join(out, 'manifest.json');
const codeCachePath = join(out, 'code-cache.json');

const stdlib = () => require('node-stdlib-browser');
// Built-in modules served from a polyfill, with the polyfill's packages (for the docs) (the rest of the built-ins the runtime answers itself: buffer, crypto,
// zlib, process, timers, and http/https from the outbound-HTTP work).
const BUILTINS = {
  assert: [() => stdlib().assert, 'assert'],
  events: [() => stdlib().events, 'events'],
  path: [() => stdlib().path, 'path-browserify'],
  punycode: [() => stdlib().punycode, 'node-stdlib-browser/node_modules/punycode'],
  querystring: [() => stdlib().querystring, 'querystring-es3'],
  // Node's own streams (v18's, as readable-stream 4 copies them): Readable.from, promises, pipeline over generators.
  stream: [() => require.resolve('readable-stream/lib/stream.js'), 'readable-stream'],
  string_decoder: [() => stdlib().string_decoder, 'string_decoder'],
  url: [() => stdlib().url, 'url'],
  util: [() => stdlib().util, 'util'],
};
// The platform's allowlisted packages. `entry` when the package's main entry is not the one to bundle.
const PACKAGES = {
  axios: {},
  'node-fetch': {},
  'crypto-js': {},
  'node-forge': {},
  'node-jose': {},
  jose: {},
  openpgp: {},
  uuid: {},
  // Its Node entry reads its grammar from files at load; its browser build carries it.
  jsonpath: { entry: 'jsonpath/jsonpath.js' },
  xmlbuilder2: {},
  yup: {},
  'csv-parse': {},
  'csv-parse/sync': { version: 'csv-parse' },
  'pdf-lib': {},
  pdfkit: { entry: 'pdfkit/js/pdfkit.standalone.js' },
  exceljs: { entry: 'exceljs/dist/exceljs.js' },
  'mastercard-oauth1-signer': {},
  'mastercard-client-encryption': {},
  stripe: {},
  twilio: {},
  braintree: {},
  '@adyen/api-library': {},
  'dwolla-v2': {},
  soap: {},
};

function fileName(name) {
  return name.replace(/[@/]/g, (c) => (c === '@' ? '' : '__')) + '.js';
}

function packageVersion(name) {
  return JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}

function isStale() {
  if (!existsSync(manifestPath)) return true;
  const built = statSync(manifestPath).mtimeMs;
  return [join(root, 'package-lock.json'), __filename].some((f) => statSync(f).mtimeMs > built);
}

const SAME_AS_REGISTRY = new Set(['process', 'string_decoder']);
const NODE_BUILTINS = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

async function bundle(esbuild, name, entry, kind) {
  const result = await esbuild.build({
    // A package by name goes through esbuild's own resolution (its "exports" conditions below).
    stdin: { contents: `module.exports = require(${JSON.stringify(entry)});`, resolveDir: root, loader: 'js' },
    bundle: true,
    write: false,
    format: 'cjs',
    // Polyfills as bundlers use them (their "browser" entries: readable-stream's own stream, not Node's); packages as
    // Node loads them, over the sandbox's built-ins.
    platform: kind === 'builtin' ? 'browser' : 'node',
    target: 'es2022',
    mainFields: kind === 'builtin' ? ['browser', 'module', 'main'] : ['main', 'module'],
    conditions: kind === 'builtin' ? ['browser', 'require', 'default'] : ['require', 'node', 'default'],
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
    // Built-ins come from the sandbox's registry at run time, whichever package asks.
    plugins: [
      {
        name: 'sandbox-builtins',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) => {
            const bare = args.path.replace(/\/$/, '');
            // `require('x/')` names the npm package rather than the built-in; for a polyfill asking for `process/` or
            // `string_decoder/` (readable-stream), that is what the registry serves anyway (its process.nextTick is
            // a microtask, where the npm `process` shim's waits for a timer).
            const registry = args.path === bare || (kind === 'builtin' && SAME_AS_REGISTRY.has(bare));
            if (NODE_BUILTINS.has(bare) && registry) return { path: bare, external: true };
            return undefined;
          });
        },
      },
    ],
  });
  const code = result.outputFiles[0].text;
  // One-shot registration (runtime/modules.js defines __gatehouse_module just for the run of this script).
  return `__gatehouse_module(function (exports, require, module, __filename, __dirname) {\n${code}\n});\n`;
}

function codeCacheIsStale() {
  if (!existsSync(codeCachePath)) return true;
  if (statSync(manifestPath).mtimeMs > statSync(codeCachePath).mtimeMs) return true;
  try {
    const made = JSON.parse(readFileSync(codeCachePath, 'utf8'));
    // Caches from before the manifest named the producer's arguments are of unknown flags.
    return made.v8 !== process.versions.v8 || !Array.isArray(made.execArgv);
  } catch {
    return true;
  }
}

// The producer runs the bundles in a sandbox isolate, in a process started as the sandbox processes are (the same
// arguments: V8 takes a cache only under the flags that made it; code-cache-child.ts restarts itself with them):
// compiled, or from the sources when never built.
function makeCodeCaches() {
  const compiled = join(root, 'dist', 'libs', 'reactor', 'src', 'code-cache-child.js');
  const args = existsSync(compiled)
    ? [compiled]
    : ['--require', join(root, 'libs', 'reactor', 'src', 'register-ts-sources.js'), join(root, 'libs', 'reactor', 'src', 'code-cache-child.ts')];
  const run = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
  // Without caches every module still loads (compiled from its source): a failure here is reported, not fatal.
  if (run.status !== 0) rmSync(codeCachePath, { force: true });
}

async function main() {
  if (process.argv.includes('--code-cache-only')) {
    if (existsSync(manifestPath) && codeCacheIsStale()) makeCodeCaches();
    return;
  }
  if (process.argv.includes('--if-stale') && !isStale()) {
    if (codeCacheIsStale()) makeCodeCaches();
    return;
  }
  const esbuild = require('esbuild');
  const started = Date.now();
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const manifest = {};
  const failures = [];
  const jobs = [
    ...Object.entries(BUILTINS).map(([name, [entry, ...packages]]) => ({
      name,
      entry: entry(),
      version: packages.map((p) => `${p.split('/').pop()}@${packageVersion(p)}`).join(', '),
      kind: 'builtin',
    })),
    ...Object.entries(PACKAGES).map(([name, spec]) => ({
      name,
      entry: spec.entry ? join(root, 'node_modules', spec.entry) : name,
      version: packageVersion(spec.version ?? name),
      kind: 'package',
    })),
  ];
  for (const job of jobs) {
    try {
      const code = await bundle(esbuild, job.name, job.entry, job.kind);
      const file = fileName(job.name);
      writeFileSync(join(out, file), code);
      manifest[job.name] = { file, kind: job.kind, version: job.version, bytes: Buffer.byteLength(code) };
    } catch (error) {
      failures.push(`${job.name}: ${error.message.split('\n')[0]}`);
    }
  }
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 1));
  const total = Object.values(manifest).reduce((n, m) => n + m.bytes, 0);
  process.stderr.write(
    `sandbox modules: ${Object.keys(manifest).length} bundled (${(total / 1048576).toFixed(1)} MiB) in ${Date.now() - started} ms` +
      `${failures.length ? `; not bundled: ${failures.join('; ')}` : ''}\n`,
  );
  if (failures.length) process.exitCode = 1;
  else makeCodeCaches();
}

if (!existsSync(dirname(out))) mkdirSync(dirname(out), { recursive: true });
main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
