import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The JavaScript evaluated inside every fresh sandbox context before any tenant code: the Node-16-style
 * surface (console, Buffer, URL, TextEncoder, crypto, errors, svc, timers), the one-shot loader that runs
 * the tenant's module and serialises its outcome, and the control ops the host drives it with.
 *
 * It lives in plain script files under `runtime/`, one per concern, linted with the isolate's globals
 * only (ES builtins: no Node, no DOM; see eslint.config.mjs). They are read as text and joined here, in
 * this order, into the body of one function, so no compiler, bundler or coverage instrumentation can
 * put host-side references into what the isolate runs. Each file names what it takes from the files
 * before it (`/* global *\/`) and what it gives to the files after it (`/* exported *\/`).
 *
 * The script evaluates to `install(host, limitsJson)`. `host(op, a, b, c)` is the single host function
 * (an isolated-vm Callback) and answers `[true, value]` or `[false, message]`; it is only ever captured
 * by closures, never stored on a global, so a transform cannot call it directly. `install` returns the
 * runtime's `control(op, a, b)`.
 */
export const RUNTIME_FILES = [
  'intrinsics.js',
  'builtin-guards.js',
  'host.js',
  'errors.js',
  'encodings.js',
  'buffer.js',
  'text.js',
  'url.js',
  'console.js',
  'timers.js',
  'svc.js',
  'http.js',
  'http-incoming.js',
  'http-client.js',
  'fetch.js',
  'crypto.js',
  'crypto-native.js',
  'crypto-exchange.js',
  'crypto-subtle.js',
  'process.js',
  'zlib.js',
  'node-extras.js',
  'node-subpaths.js',
  'modules.js',
  'loader.js',
] as const;

export const SANDBOX_RUNTIME_FILENAME = 'gatehouse:runtime';

/**
 * Where the runtime files are: beside this module, in its sources and in dist alike (the build copies
 * them next to the compiled code: scripts/build.js), so an image with dist and no sources runs them.
 */
export function runtimeDirectory(): string {
  return join(__dirname, 'runtime');
}

export function joinRuntime(read: (file: string) => string): string {
  const body = RUNTIME_FILES.map((file) => `// ${file}\n${read(file)}`).join('\n');
  return `(function install(host, limitsJson) {\n'use strict';\n${body}\nreturn control;\n})\n`;
}

export const SANDBOX_RUNTIME_SOURCE = joinRuntime((file) => readFileSync(join(runtimeDirectory(), file), 'utf8'));
