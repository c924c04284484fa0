import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_VAULT_KEY } from './test-env';

export const REPO_ROOT = join(__dirname, '..', '..');
export const API_MAIN = join(REPO_ROOT, 'dist/apps/api/src/main.js');
export const CLI_MAIN = join(REPO_ROOT, 'dist/apps/api/src/cli.js');
/** The `gatehouse` executable operators run (package.json bin). */
export const CLI_BIN = join(REPO_ROOT, 'bin/gatehouse.js');
/** A start on a loaded machine (a fresh embedded database, 8 test runs at once) can take tens of seconds. */
const LISTENING_TIMEOUT_MS = 90_000;
export const WORKER_MAIN = join(REPO_ROOT, 'dist/apps/worker/src/main.js');
const API_LISTENING = /"port":(\d+)[^\n]*"msg":"gatehouse api listening"/;
const CONSOLE_LISTENING = /"console_port":(\d+)[^\n]*"msg":"console listening"/;

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  /** The console's own origin (CONSOLE_PORT, a free port unless a test sets it), when it is served. */
  consoleUrl?: string;
  /** stdout and stderr together, as they arrived. */
  output: () => string;
  /** stdout alone: the JSON log stream. */
  stdout: () => string;
  exited: Promise<number | null>;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** The built service as deployments run it (`npm test` builds first). */
export function assertBuilt(): void {
  if (!existsSync(API_MAIN)) throw new Error(`${API_MAIN} is missing: run \`npm run build\` first (npm test does)`);
}

/**
 * Spawns a built entry point and waits for its ready line: by default the api's "listening" line, whose first
 * group is the port (0 when a ready line has no group).
 */
export async function startServiceProcess(env: Record<string, string>, args: string[] = [], script = API_MAIN, ready = API_LISTENING): Promise<ServiceProcess> {
  return startCommand([process.execPath, '--no-node-snapshot', script, ...args], env, ready);
}

/** Spawns `command` (e.g. what the container image runs) in the repository and waits for its ready line. */
export async function startCommand(command: string[], env: Record<string, string>, ready = API_LISTENING): Promise<ServiceProcess> {
  assertBuilt();
  const [file, ...args] = command;
  const child = spawn(file!, args, {
    cwd: REPO_ROOT,
    // The tests' vault key unless a test gives its own (VAULT_KEY_FILE, or VAULT_KEY '' to have one generated into DATA_DIR).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      PORT: '0',
      CONSOLE_PORT: '0',
      LOG_LEVEL: 'info',
      ...(env.VAULT_KEY_FILE === undefined ? { VAULT_KEY: TEST_VAULT_KEY } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => {
    output += d.toString();
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  // 'exit' may come before the pipes are read to their end: what the process wrote last (its "stopped" line) is
  // awaited too, for a moment at most (a child of its own could hold a pipe open).
  const drained = Promise.all([child.stdout!, child.stderr!].map((stream) => new Promise((resolve) => stream.once('close', resolve))));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => void Promise.race([drained, new Promise((r) => setTimeout(r, 2_000).unref())]).then(() => resolve(code))),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within ${LISTENING_TIMEOUT_MS / 1000} s:\n${output}`)), LISTENING_TIMEOUT_MS);
    const check = () => {
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(Number(match[1] ?? 0));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code} before listening:\n${output}`));
    });
  });
  const consolePort = CONSOLE_LISTENING.exec(output)?.[1];
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    ...(consolePort === undefined ? {} : { consoleUrl: `http://127.0.0.1:${consolePort}` }),
    output: () => output,
    stdout: () => stdout,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

const FIRST_KEY_BANNER = /management API key, shown once, is:\s+(key_[0-9A-Za-z]{32,})/;

/**
 * The management key a first start prints on stderr. The banner is written before the ready line (stdout), but the
 * two pipes are read independently, so it may arrive after `startServiceProcess` resolved: wait for it.
 */
export async function firstManagementKey(service: ServiceProcess, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const key = FIRST_KEY_BANNER.exec(service.output())?.[1];
    if (key) return key;
    if (Date.now() > deadline || service.child.exitCode !== null) throw new Error(`no first management key printed:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs a built entry point to completion. */
export function runToCompletion(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  assertBuilt();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--no-node-snapshot', script, ...args], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        CONSOLE_PORT: '0',
        ...(env.VAULT_KEY_FILE === undefined ? { VAULT_KEY: TEST_VAULT_KEY } : {}),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A JSON POST to a running service as the holder of `key`: its status and parsed body. */
export async function postAs(service: ServiceProcess, key: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${service.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** A proxy to `destination` with a request transform that passes the request on unchanged. */
export async function createPassThroughProxy(service: ServiceProcess, key: string, destination: string): Promise<string> {
  const created = await postAs(service, key, '/proxies', {
    name: 'pass-through',
    destination_url: destination,
    require_auth: false,
    request_transform: { code: 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });' },
  });
  if (created.status !== 201) throw new Error(`proxy not created: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.key as string;
}
