#!/usr/bin/env node
'use strict';
// `npm run config:docs`: writes `.env.example` and the README's configuration table (between <!-- config:start -->
// and <!-- config:end -->) from the configuration schema, libs/config/src/schema.ts. `--check` writes nothing and
// exits 1 when either file differs from what the schema gives (libs/config/src/config-docs.spec.ts checks the same in
// `npm test`).
//
// The schema is TypeScript: its few files are compiled in memory by swc (as Jest does), so this needs no build.
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const Module = require('node:module');

const root = join(__dirname, '..');
const swc = require('@swc/core');
const options = JSON.parse(readFileSync(join(root, '.swcrc'), 'utf8'));
delete options.$schema;
// Registering `.ts` also lets `require('./schema')` inside those files find `schema.ts`.
Module._extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(readFileSync(filename, 'utf8'), { ...options, filename, sourceMaps: false });
  module._compile(code, filename);
};
const { renderEnvExample, withConfigTable } = require(join(root, 'libs/config/src/config-docs.ts'));

const check = process.argv.includes('--check');
const files = [
  { path: join(root, '.env.example'), render: () => renderEnvExample() },
  { path: join(root, 'README.md'), render: (current) => withConfigTable(current) },
];
let stale = 0;
for (const { path, render } of files) {
  const current = readFileSync(path, 'utf8');
  const wanted = render(current);
  const name = path.slice(root.length + 1);
  if (current === wanted) {
    process.stdout.write(`${name}: up to date\n`);
  } else if (check) {
    stale += 1;
    process.stderr.write(`${name}: differs from libs/config/src/schema.ts: run npm run config:docs\n`);
  } else {
    writeFileSync(path, wanted);
    process.stdout.write(`${name}: written\n`);
  }
}
process.exit(stale > 0 ? 1 : 0);
