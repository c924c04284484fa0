import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@gatehouse/test-support/service-process';

// scripts/release.js up to the build command (docker cannot run here): --dry-run checks the tree and prints what it
// would run; a tree that is not one coherent, pinned release is refused with every problem named.
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function release(args: string[], root?: string) {
  const run = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/release.js'), ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...(root ? { GATEHOUSE_RELEASE_ROOT: root } : {}) },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The files the script reads, copied into a directory of their own (no git), to be spoilt one by one. */
function copyOfRelease(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-release-'));
  for (const file of ['package.json', 'CHANGELOG.md', 'Dockerfile', 'apps/api/openapi.json', 'apps/api/package.json', 'libs/config/package.json']) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(dir, file));
  }
  return dir;
}

describe('scripts/release.js', () => {
  it('--dry-run on this tree passes every check and prints the build of gatehouse:<version> with the Dockerfile', () => {
    const result = release(['--dry-run', '--allow-dirty', '--version', VERSION, '--registry', 'registry.example.com/platform/']);
    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        `release ${VERSION}: checks passed; would run:`,
        `  docker build --build-arg GATEHOUSE_VERSION=${VERSION} -t gatehouse:${VERSION} -t registry.example.com/platform/gatehouse:${VERSION} .`,
        `  docker push registry.example.com/platform/gatehouse:${VERSION}`,
        '',
      ].join('\n'),
    });
    // Every base image is pinned by digest.
    expect(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8')).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim@sha256:[0-9a-f]{64}$/m);
  });

  it('refuses, naming every problem, a tree whose base is unpinned, whose versions disagree or whose changelog lacks the release', () => {
    const dir = copyOfRelease();
    try {
      expect(release(['--dry-run', '--allow-dirty'], dir).code).toBe(0);
      const dockerfile = readFileSync(join(dir, 'Dockerfile'), 'utf8');
      writeFileSync(join(dir, 'Dockerfile'), `${dockerfile}\nFROM debian:bookworm-slim AS extra\n`);
      const config = JSON.parse(readFileSync(join(dir, 'libs/config/package.json'), 'utf8'));
      writeFileSync(join(dir, 'libs/config/package.json'), JSON.stringify({ ...config, version: '0.9.0' }));
      const openapi = JSON.parse(readFileSync(join(dir, 'apps/api/openapi.json'), 'utf8'));
      writeFileSync(join(dir, 'apps/api/openapi.json'), JSON.stringify({ ...openapi, info: { ...openapi.info, version: '1' } }));
      writeFileSync(join(dir, 'CHANGELOG.md'), '# Changelog\n\n## [Unreleased]\n');
      const result = release(['--dry-run'], dir);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n').sort()).toEqual(
        [
          `release: libs/config/package.json has version 0.9.0, not ${VERSION}`,
          `release: apps/api/openapi.json info.version is 1, not ${VERSION} (npm run openapi)`,
          `release: CHANGELOG.md has no '## [${VERSION}]' entry`,
          'release: Dockerfile: FROM debian:bookworm-slim (debian:bookworm-slim) is not pinned by digest',
          'release: not a git work tree (--allow-dirty to build anyway)',
        ].sort(),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses another --version than package.json's, and wrong arguments with exit code 2", () => {
    expect(release(['--dry-run', '--allow-dirty', '--version', '9.9.9'])).toMatchObject({
      code: 1,
      stderr: `release: --version 9.9.9 is not package.json's version ${VERSION}\n`,
    });
    expect(release(['--dry-run', '--builder', 'kaniko'])).toMatchObject({ code: 2, stderr: "release: --builder must be docker or podman, got 'kaniko'\n" });
    expect(release(['--push'])).toMatchObject({ code: 2 });
  });
});
