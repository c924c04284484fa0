#!/usr/bin/env -S node --no-node-snapshot
'use strict';
// The `gatehouse` command (package.json "bin": `npx gatehouse --help`): runs the built CLI, never builds. It needs
// Node.js 24 with --no-node-snapshot (isolated-vm); run from a shell whose `node` is another version, it starts the
// project's own Node 24 (node_modules/node) instead. Kept to syntax any Node since 12 can parse, to say so clearly.
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const cli = join(root, 'dist', 'apps', 'api', 'src', 'cli.js');
if (!existsSync(cli)) {
  process.stderr.write('gatehouse: not built yet: run `npm run build` (`npm install` does it once)\n');
  process.exit(1);
}
const onNode24 = process.versions.node.split('.')[0] === '24';
if (onNode24 && process.execArgv.includes('--no-node-snapshot')) {
  require(cli);
} else {
  const node = onNode24 ? process.execPath : join(root, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(node)) {
    process.stderr.write(`gatehouse: needs Node.js 24 (this is ${process.version}): run \`npm install\`, then \`npx gatehouse\`\n`);
    process.exit(1);
  }
  const run = spawnSync(node, ['--no-node-snapshot', '--enable-source-maps', cli].concat(process.argv.slice(2)), { stdio: 'inherit' });
  process.exit(run.status === null ? 1 : run.status);
}
