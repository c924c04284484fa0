#!/usr/bin/env node
// Makes package-lock.json record the platform-specific optional packages of every platform, so `npm ci` accepts it
// on any machine (npm/cli#4828: npm leaves out the optional packages it could not resolve, and `npm ci` then refuses
// the lock everywhere with "Missing: @swc/core-darwin-arm64@ from lock file").
//
// Why a script and not only "regenerate the lock from scratch": the registry reached from the project's machines
// serves the binaries of the platforms it runs on, not those of macOS or Windows, so even a lock generated from
// nothing lacks them here. For each optional dependency that the lock names but does not record, this adds the entry
// npm would have written (exact version, registry tarball, os/cpu/libc read from the package name, the flags of a
// recorded sibling). Such an entry has no `integrity`: npm computes it when it installs the package on that platform.
// Against a registry that has every platform, a lock regenerated from scratch is already complete and this is a no-op.
//
//   node .ci/lock-platforms.js          add what is missing (npm run lock:platforms)
//   node .ci/lock-platforms.js --check  exit 1, naming them, if anything is missing (CI)
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const LOCK = path.join(__dirname, '..', 'package-lock.json');
const REGISTRY = 'https://registry.npmjs.org/';

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'];
const ENTRY_FLAGS = ['dev', 'optional', 'devOptional', 'peer'];

/** os/cpu/libc as npm records them, read from a platform package's name ("core-linux-arm64-musl"). */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  const out = {};
  if (cpu) out.cpu = [cpu];
  if (os === 'linux') {
    if (parts.some((p) => p.startsWith('musl'))) out.libc = ['musl'];
    else if (parts.some((p) => p === 'gnu' || p.startsWith('gnueabi'))) out.libc = ['glibc'];
  }
  if (os) out.os = [os];
  return out;
}

function tarballOf(name, version) {
  return `${REGISTRY}${name}/-/${name.split('/').pop()}-${version}.tgz`;
}

/** Where npm resolves `name` from the package at `from`: the nearest node_modules folder up the tree. */
function resolvedPath(packages, from, name) {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    const up = dir.lastIndexOf('node_modules/');
    if (up < 0) {
      // A workspace folder (apps/console) resolves from the root's node_modules next, as Node does.
      if (!dir) return undefined;
      dir = '';
      continue;
    }
    dir = dir.slice(0, up).replace(/\/$/, '');
  }
}

function missingEntries(packages) {
  const missing = [];
  for (const [from, entry] of Object.entries(packages)) {
    const optional = entry.optionalDependencies ?? {};
    for (const [name, spec] of Object.entries(optional)) {
      if (resolvedPath(packages, from, name)) continue;
      if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) {
        throw new Error(`${from} wants ${name}@${spec}: not an exact version, add it by installing on that platform`);
      }
      const sibling = Object.keys(optional)
        .map((other) => resolvedPath(packages, from, other))
        .find(Boolean);
      const flagsFrom = sibling ? packages[sibling] : { ...entry, optional: true };
      // Hoisted to the top when that name is free there, next to the package that wants it otherwise.
      const at = packages[`node_modules/${name}`] ? `${from}/node_modules/${name}` : `node_modules/${name}`;
      const fields = platformOf(name);
      for (const flag of ENTRY_FLAGS) if (flagsFrom[flag]) fields[flag] = true;
      // npm's own key order, so a later `npm install` leaves the entry as it is.
      const sorted = Object.keys(fields)
        .sort()
        .map((key) => [key, fields[key]]);
      const added = { version: spec, resolved: tarballOf(name, spec), ...Object.fromEntries(sorted) };
      missing.push({ at, added });
    }
  }
  return missing;
}

function sortedPackages(packages) {
  const [root, ...rest] = Object.keys(packages);
  return Object.fromEntries([root, ...rest.sort((a, b) => a.localeCompare(b, 'en'))].map((key) => [key, packages[key]]));
}

const lock = JSON.parse(fs.readFileSync(LOCK, 'utf8'));
const missing = missingEntries(lock.packages);
if (process.argv.includes('--check')) {
  if (missing.length === 0) {
    console.log('package-lock.json records the optional packages of every platform');
    process.exit(0);
  }
  console.error(
    `package-lock.json lacks ${missing.length} platform package(s), e.g. ${missing[0].at}: run \`npm run lock:platforms\` and commit the lock (README, Dependencies)`,
  );
  process.exit(1);
}
for (const { at, added } of missing) lock.packages[at] = added;
lock.packages = sortedPackages(lock.packages);
fs.writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(
  `package-lock.json: recorded ${missing.length} platform package(s)${missing.length ? `: ${missing.map((m) => m.at.replace(/^.*node_modules\//, '')).join(', ')}` : ''}`,
);
