#!/usr/bin/env node
'use strict';
// Builds the release image `gatehouse:<version>` (docs/operations/releases.md), after checking that the repository
// is one coherent release: the version of package.json is SemVer, every workspace package and the committed OpenAPI
// document carry it, CHANGELOG.md has its entry, every base image of the Dockerfile is pinned by digest, and the work
// tree is committed. The image is built from the Dockerfile with GATEHOUSE_VERSION as a build argument.
//
//   node scripts/release.js [--dry-run] [--version X.Y.Z] [--builder docker|podman] [--registry HOST/PATH] [--allow-dirty]
//
// --dry-run checks everything and prints the commands it would run, without running them (docker cannot run on this
// project's machines: the tests run it so). --version must equal package.json's (a guard against releasing the
// wrong tree). --registry also tags HOST/PATH/gatehouse:<version> and prints the push command. Exit 0 when built (or
// checked), 1 when a check fails (each problem on a line of its own), 2 for wrong arguments.
const { spawnSync } = require('node:child_process');
const { existsSync, readFileSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const { parseArgs } = require('node:util');

const root = process.env.GATEHOUSE_RELEASE_ROOT || join(__dirname, '..');
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

function fail(code, lines) {
  for (const line of lines) process.stderr.write(`release: ${line}\n`);
  process.exit(code);
}

function json(path) {
  return JSON.parse(readFileSync(join(root, path), 'utf8'));
}

/** Every problem that keeps this tree from being released as `version`. */
function problems(version, { allowDirty }) {
  const found = [];
  if (!SEMVER.test(version)) found.push(`package.json version '${version}' is not SemVer (MAJOR.MINOR.PATCH)`);
  for (const dir of ['apps', 'libs']) {
    for (const name of existsSync(join(root, dir)) ? readdirSync(join(root, dir)) : []) {
      const path = join(dir, name, 'package.json');
      if (!existsSync(join(root, path))) continue;
      const manifest = json(path);
      if (manifest.version !== version) found.push(`${path} has version ${manifest.version}, not ${version}`);
      if (manifest.license !== 'Apache-2.0') found.push(`${path} has license ${manifest.license}, not Apache-2.0`);
    }
  }
  const openapi = json('apps/api/openapi.json');
  if (openapi.info?.version !== version) found.push(`apps/api/openapi.json info.version is ${openapi.info?.version}, not ${version} (npm run openapi)`);
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  if (!new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\]`, 'm').test(changelog)) found.push(`CHANGELOG.md has no '## [${version}]' entry`);
  found.push(...unpinnedBases(readFileSync(join(root, 'Dockerfile'), 'utf8')));
  if (!allowDirty) {
    const status = spawnSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' });
    if (status.status !== 0) found.push('not a git work tree (--allow-dirty to build anyway)');
    else if (status.stdout.trim()) found.push('the work tree has uncommitted changes (commit them, or --allow-dirty)');
  }
  return found;
}

/** A FROM whose image (after the ARG defaults it names) is not `name@sha256:<64 hex>`, or names an earlier stage. */
function unpinnedBases(dockerfile) {
  const args = {};
  const stages = new Set();
  const found = [];
  for (const line of dockerfile.split('\n')) {
    const arg = /^ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)/.exec(line);
    if (arg) args[arg[1]] = arg[2];
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (!from) continue;
    const image = from[1].replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name) => args[name] ?? '');
    if (!stages.has(image) && !/^[^\s@]+@sha256:[0-9a-f]{64}$/.test(image))
      found.push(`Dockerfile: FROM ${from[1]} (${image || 'empty'}) is not pinned by digest`);
    if (from[2]) stages.add(from[2]);
  }
  if (found.length === 0 && !/^FROM /m.test(dockerfile)) found.push('Dockerfile: no FROM');
  return found;
}

function main() {
  let options;
  try {
    options = parseArgs({
      options: {
        'dry-run': { type: 'boolean' },
        version: { type: 'string' },
        builder: { type: 'string', default: 'docker' },
        registry: { type: 'string' },
        'allow-dirty': { type: 'boolean' },
      },
      strict: true,
    }).values;
  } catch (error) {
    fail(2, [error.message]);
  }
  if (!['docker', 'podman'].includes(options.builder)) fail(2, [`--builder must be docker or podman, got '${options.builder}'`]);
  const version = json('package.json').version;
  if (options.version !== undefined && options.version !== version) fail(1, [`--version ${options.version} is not package.json's version ${version}`]);
  const found = problems(version, { allowDirty: options['allow-dirty'] });
  if (found.length > 0) fail(1, found);

  const tags = [`gatehouse:${version}`, ...(options.registry ? [`${options.registry.replace(/\/+$/, '')}/gatehouse:${version}`] : [])];
  const build = [options.builder, 'build', '--build-arg', `GATEHOUSE_VERSION=${version}`, ...tags.flatMap((t) => ['-t', t]), '.'];
  const push = tags.slice(1).map((t) => [options.builder, 'push', t]);
  if (options['dry-run']) {
    process.stdout.write(`release ${version}: checks passed; would run:\n${[build, ...push].map((c) => `  ${c.join(' ')}`).join('\n')}\n`);
    return;
  }
  for (const command of [build, ...push]) {
    process.stdout.write(`$ ${command.join(' ')}\n`);
    const run = spawnSync(command[0], command.slice(1), { cwd: root, stdio: 'inherit' });
    if (run.status !== 0) fail(1, [`${command.slice(0, 2).join(' ')} failed${run.error ? `: ${run.error.message}` : ''}`]);
  }
  process.stdout.write(`release ${version}: built ${tags.join(', ')}; tag the commit: git tag -a v${version} -m 'Gatehouse ${version}'\n`);
}

main();
