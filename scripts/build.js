#!/usr/bin/env node
'use strict';
// `npm run build` compiles everything into dist/ (tsc, then the console's own build into dist/console) and, once it
// succeeded, stamps dist/.built. With --if-stale
// (`npm install` via "prepare", and `npm start` via "prestart") it compiles only when a source is newer than that
// stamp, so a fresh clone builds once at install and a restart does not build at all.
const { spawnSync } = require('node:child_process');
const { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.built');
// What the compiled output depends on: the TypeScript sources and the compiler settings.
const INPUTS = ['apps', 'libs'];
const SETTINGS = ['tsconfig.base.json', 'tsconfig.build.json', 'package.json', 'apps/api/openapi.json'].map((f) => join(root, f));
// Files the compiled code reads at run time, copied beside it (tsc compiles TypeScript only): the sandbox runtime's
// scripts, which the reactor joins into what every sandbox context evaluates (libs/reactor/src/sandbox-runtime.ts).
const ASSETS = ['libs/reactor/src/runtime'];

function newestSource() {
  let newest = { at: 0, path: '' };
  let sources = false;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'test') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      // Generated files (the console's API types) are written by the build itself, from apps/api/openapi.json.
      else if (!/\.(spec|test|gen)\.[cm]?[jt]sx?$/.test(entry.name)) consider(path);
    }
  };
  const consider = (path) => {
    const at = statSync(path).mtimeMs;
    if (at > newest.at) newest = { at, path };
  };
  for (const top of INPUTS) {
    const dir = join(root, top);
    if (!existsSync(dir)) continue;
    for (const project of readdirSync(dir)) {
      const src = join(dir, project, 'src');
      if (existsSync(src)) {
        sources = true;
        visit(src);
      }
      for (const file of ['index.html', 'vite.config.ts', 'tsconfig.json', 'package.json']) {
        if (existsSync(join(dir, project, file))) consider(join(dir, project, file));
      }
    }
  }
  // Manifests alone are no sources (the image's dependency layer has the workspaces' package.json, nothing else).
  if (!sources) return undefined;
  for (const file of SETTINGS) if (existsSync(file)) consider(file);
  return newest;
}

const started = Date.now();
if (process.argv.includes('--if-stale')) {
  const source = newestSource();
  // No sources (an image layer that installs dependencies before copying them): nothing to build.
  if (!source) process.exit(0);
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= source.at) {
    process.stderr.write(`dist/ is up to date (checked in ${Date.now() - started} ms)\n`);
    process.exit(0);
  }
  const why = existsSync(stamp) ? `${source.path.slice(root.length + 1)} changed since the last build` : 'dist/ was never built';
  process.stderr.write(`building: ${why}...\n`);
}
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
const build = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
if (build.status !== 0) process.exit(build.status === null ? 1 : build.status);
for (const asset of ASSETS) {
  const target = join(root, 'dist', asset);
  // Replaced, not merged: a script deleted from the sources must not linger in dist.
  rmSync(target, { recursive: true, force: true });
  cpSync(join(root, asset), target, { recursive: true });
}
// What transforms may require besides the runtime's own modules: the polyfills and the allowlisted packages, bundled
// into dist/sandbox-modules (rebuilt only when package-lock.json or its script changed).
const modules = spawnSync(process.execPath, [join(__dirname, 'build-sandbox-modules.js'), '--if-stale'], { stdio: 'inherit', cwd: root });
if (modules.status !== 0) process.exit(modules.status === null ? 1 : modules.status);
// The web console (a workspace with a build script of its own: vite) into dist/console.
const workspaces = join(root, 'apps');
for (const project of existsSync(workspaces) ? readdirSync(workspaces) : []) {
  const manifest = join(workspaces, project, 'package.json');
  if (!existsSync(manifest) || !JSON.parse(readFileSync(manifest, 'utf8')).scripts?.build) continue;
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const app = spawnSync(npm[0], [...npm.slice(1), 'run', 'build', '--silent', '-w', `apps/${project}`], { stdio: 'inherit', cwd: root });
  if (app.status !== 0) process.exit(app.status === null ? 1 : app.status);
}
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(stamp, `${new Date(started).toISOString()}\n`);
// Dated when the build began: a source saved while tsc ran is newer, and the next start builds again.
utimesSync(stamp, started / 1000, started / 1000);
if (process.argv.includes('--if-stale')) process.stderr.write(`built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
