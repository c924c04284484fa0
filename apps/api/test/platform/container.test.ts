import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { REPO_ROOT, ServiceProcess, startCommand } from '@gatehouse/test-support/service-process';
import { startTestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL, TEST_REDIS_URL, TEST_VAULT_KEY } from '@gatehouse/test-support/test-env';
import { deleteQueueKeys, uniquePrefix } from '@gatehouse/jobs/testing';

/**
 * `docker stop` sends SIGTERM to the container's PID 1 and SIGKILLs it after a grace period. This runs exactly the
 * image's ENTRYPOINT + CMD (read from the Dockerfile) as PID 1 of a PID namespace of its own (`unshare`, as a
 * container runtime does), sends SIGTERM to that PID 1 from outside, and checks that the service drains.
 */
function imageCommand(): string[] {
  const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const instruction = (name: string) => {
    const line = finalStage.split('\n').find((l) => l.startsWith(`${name} [`));
    if (!line) throw new Error(`the Dockerfile's last stage has no ${name} [...] (exec form)`);
    return JSON.parse(line.slice(name.length + 1)) as string[];
  };
  return [...instruction('ENTRYPOINT'), ...instruction('CMD')];
}

/** PID 1 of the namespace: the only child of `unshare --fork`. */
function namespaceInit(unsharePid: number): number {
  const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/);
  expect(children).toHaveLength(1);
  return Number(children[0]);
}

const asPid1 = (command: string[]) => [
  'unshare',
  '--fork',
  '--pid',
  '--mount-proc',
  // Unprivileged developers get a user namespace to be root in; CI runs as root.
  ...(process.getuid?.() === 0 ? [] : ['--map-root-user']),
  ...command,
];

// The image's `node` is Node 24 on the PATH: here, the one running the tests.
const env = (extra: Record<string, string>) => ({ PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...extra });

describe('the container image command', () => {
  const command = imageCommand();

  beforeAll(() => {
    if (!existsSync(command[0]!)) throw new Error(`${command[0]} is missing: install tini (apt-get install tini; .ci/run does)`);
    if (spawnSync('unshare', ['--version']).status !== 0) throw new Error('unshare (util-linux) is missing');
  });

  it('runs node under tini, not npm', () => {
    expect(command.slice(0, 3)).toEqual(['/usr/bin/tini', '--', 'node']);
    expect(command).toContain('--no-node-snapshot');
  });

  it('on SIGTERM to PID 1: /health/ready answers 503 at once, in-flight requests complete, then it exits 0', async () => {
    const admin = await startTestApp();
    const { key } = await admin.tenant();
    await admin.close();
    const service: ServiceProcess = await startCommand(asPid1(command), env({ DATABASE_URL: TEST_DATABASE_URL, SHUTDOWN_DELAY_MS: '1500' }));
    const init = namespaceInit(service.child.pid!);
    expect(readFileSync(`/proc/${init}/cmdline`, 'utf8').split('\0')[0]).toBe(command[0]);
    expect((await fetch(`${service.baseUrl}/health/ready`)).status).toBe(200);

    // A request whose body is still arriving when SIGTERM lands.
    const body = JSON.stringify({ name: 'drained', type: 'private', permissions: ['token:read'] });
    const req = httpRequest(`${service.baseUrl}/applications`, {
      method: 'POST',
      headers: { 'svc-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const response = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    req.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));

    const signalled = Date.now();
    process.kill(init, 'SIGTERM');
    // Not ready from the first moment, while still serving: load balancers take it out before it stops accepting.
    let ready: Response | undefined;
    for (let i = 0; i < 50; i++) {
      ready = await fetch(`${service.baseUrl}/health/ready`);
      if (ready.status === 503) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(ready!.status).toBe(503);
    expect(await ready!.json()).toEqual({ status: 'draining' });
    expect((await fetch(`${service.baseUrl}/health/live`)).status).toBe(200);
    req.end(body.slice(10));
    expect(await response).toBe(201);

    expect(await service.exited).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1500);
    const log = service.stdout();
    expect(log).toMatch(/"signal":"SIGTERM","delay_ms":1500,"msg":"draining: \/health\/ready answers 503"/);
    expect(log).toMatch(/"msg":"stopped"/);
    await expect(fetch(`${service.baseUrl}/health/live`)).rejects.toThrow();
  }, 120_000);

  it('runs the worker command of docker-compose.yml the same way: healthy while running, exits 0 on SIGTERM', async () => {
    const compose = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
    const worker = compose.slice(compose.indexOf('\n  worker:'));
    const workerCommand = JSON.parse(/\n {4}command: (\[.*\])/.exec(worker)![1]!) as string[];
    const healthcheck = JSON.parse(/\n {6}test: (\[.*\])/.exec(worker)![1]!) as string[];
    expect(healthcheck[0]).toBe('CMD');
    const prefix = uniquePrefix('container');
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-worker-'));
    // A file of its own: other test runs on this machine start workers too.
    const heartbeat = { WORKER_HEARTBEAT_FILE: join(dir, 'heartbeat') };
    const check = () => spawnSync(healthcheck[1]!, healthcheck.slice(2), { cwd: REPO_ROOT, env: env(heartbeat) }).status;
    expect(check()).toBe(1);
    const child = await startWorker(
      asPid1([command[0]!, '--', ...workerCommand]),
      env({ DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix, VAULT_KEY: TEST_VAULT_KEY, ...heartbeat }),
    );
    try {
      // The healthcheck runs beside the worker, as `docker exec` would, and passes once the heartbeat is written.
      let healthy = false;
      for (let i = 0; i < 40 && !healthy; i++) {
        healthy = check() === 0;
        if (!healthy) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(healthy).toBe(true);
      process.kill(namespaceInit(child.pid), 'SIGTERM');
      expect(await child.exited).toBe(0);
      expect(child.output()).toMatch(/"msg":"stopped"/);
      expect(check()).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await deleteQueueKeys(prefix);
    }
  }, 120_000);
});

/** The worker logs "gatehouse worker running" once it takes jobs. */
async function startWorker(command: string[], env: Record<string, string>) {
  const { spawn } = await import('node:child_process');
  const [file, ...args] = command;
  const child = spawn(file!, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  while (!/"msg":"gatehouse worker running"/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the worker did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { pid: child.pid!, exited, output: () => output };
}

describe("the image's node_modules", () => {
  // What `npm prune` in the Dockerfile's build stage would remove from this (full, development) install, as
  // `name version`: a package can be installed at several versions (an old js-yaml nested under a dev tool).
  function removedByThePrune(): Set<string> {
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const flags = /\bnpm prune ((?:--[\w=-]+ ?)+)/.exec(dockerfile)?.[1]?.trim().split(/\s+/);
    if (!flags) throw new Error('the Dockerfile runs no `npm prune`');
    const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
    const run = spawnSync(npm[0]!, [...npm.slice(1), 'prune', ...flags, '--dry-run'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.status).toBe(0);
    return new Set(run.stdout.split('\n').flatMap((line) => (line.startsWith('remove ') ? [line.slice('remove '.length).trim()] : [])));
  }
  // The root's install of a package, the one `require(name)` finds from the service's code.
  const topLevel = (name: string) => `${name} ${JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')).version}`;

  it('hold production dependencies only: no compiler, test, bundler or console-only package', () => {
    const removed = removedByThePrune();
    // typescript is an optional peer of @nestjs/swagger (its compile-time plugin): `--omit=dev` alone keeps it.
    for (const name of ['typescript', 'jest', '@swc/core', 'vite', 'openapi-typescript', 'react', 'react-dom']) {
      expect([name, [...removed].some((entry) => entry.startsWith(`${name} `))]).toEqual([name, true]);
    }
    // openapi-fetch and js-yaml: `gatehouse apply` (the client package and gatehouse.yaml).
    for (const name of ['@nestjs/core', '@nestjs/swagger', 'pg', 'bullmq', 'isolated-vm', '@opentelemetry/sdk-trace', 'openapi-fetch', 'js-yaml']) {
      expect([name, removed.has(topLevel(name))]).toEqual([name, false]);
    }
  }, 60_000);

  it('the console declares no dependencies: Vite bundles everything it uses into dist/console, so they are devDependencies', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'apps/console/package.json'), 'utf8'));
    expect(manifest.dependencies).toBeUndefined();
  });
});
