import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, Socket } from 'node:net';
import Redis from 'ioredis';

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A redis-server of the test's own, on a free port, without persistence (the compose default of many deployments), so
 * that a test may restart or flush it without touching the machine's Redis that other tests use.
 */
export interface PrivateRedis {
  port: number;
  url: string;
  /** A client for the test's own commands (FLUSHALL, HGET). */
  client: () => Redis;
  /** Kills the server (SIGKILL: nothing written anywhere) and starts a new one on the same port, empty. */
  restart: () => Promise<void>;
  stop: () => Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child = await launch(port);
  const stopped = async () => {
    await kill(child);
    rmSync(child.dir, { recursive: true, force: true });
  };
  const clients: Redis[] = [];
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    client: () => {
      const client = new Redis({ port, host: '127.0.0.1', lazyConnect: false, maxRetriesPerRequest: 3 });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    restart: async () => {
      await stopped();
      child = await launch(port);
    },
    stop: async () => {
      clients.forEach((c) => c.disconnect());
      await stopped();
    },
  };
}

/**
 * A fresh, empty directory each time: nothing is saved there, but a replica writes the copy it receives, and a server
 * started where a dump lies would load it.
 */
async function launch(port: number): Promise<ChildProcess & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const child = Object.assign(spawn('redis-server', args, { stdio: 'ignore' }), { dir });
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return child;
      } catch {
        if (attempt > 100 || child.exitCode !== null) throw new Error(`redis-server did not start on port ${port}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  } finally {
    probe.disconnect();
  }
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** A TCP forwarder the test controls, standing where a load balancer or a failover address would. */
export interface Forwarder {
  port: number;
  url: string;
  /** Sends new connections to `port`, and drops the open ones (as a failover does). */
  switchTo: (port: number) => void;
  stop: () => Promise<void>;
}

export async function startForwarder(targetPort: number): Promise<Forwarder> {
  let target = targetPort;
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(target, '127.0.0.1');
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    switchTo: (next) => {
      target = next;
      for (const socket of sockets) socket.destroy();
    },
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
