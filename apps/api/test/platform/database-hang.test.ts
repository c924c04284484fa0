import { randomUUID } from 'node:crypto';
import { createServer, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { UnavailableError } from '@gatehouse/domain';
import { openDatabase, QUERY_TIMEOUT_GRACE_MS, translateDatabaseError } from '@gatehouse/persistence';
import { TcpForwarder } from '@gatehouse/test-support/tcp-forwarder';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';
import { as, newTenant } from '../support/application-fixtures';

jest.setTimeout(60_000);

const STATEMENT_TIMEOUT_MS = 500;

/** The test database's URL with its host and port replaced (a forwarder or a fake server in front of it). */
function via(port: number): string {
  const url = new URL(TEST_DATABASE_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

async function rejection(attempt: Promise<unknown>): Promise<unknown> {
  return attempt.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

/**
 * A PostgreSQL that hangs (accepts, then never answers) or a statement that runs too long is a 503 with Retry-After
 * within DATABASE_STATEMENT_TIMEOUT_MS (+ QUERY_TIMEOUT_GRACE_MS), never a request that waits forever.
 */
describe('a PostgreSQL that does not answer', () => {
  it('a server that accepts connections and never answers: opening the database fails within the connect timeout, as unavailable', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const error = await rejection(
        openDatabase({ url: via((silent.address() as AddressInfo).port), dataDir: '', poolSize: 1, statementTimeoutMs: STATEMENT_TIMEOUT_MS }),
      );
      expect(translateDatabaseError(error)).toBeInstanceOf(UnavailableError);
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('a statement running past DATABASE_STATEMENT_TIMEOUT_MS is cancelled by the server (57014): unavailable, the connection still usable', async () => {
    const database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 1, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    try {
      const error = await rejection(database.dataSource.query('SELECT pg_sleep(30)'));
      expect(translateDatabaseError(error)).toMatchObject({ code: 'unavailable', reason: '57014' });
      expect(await database.dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await database.close();
    }
  });

  describe('over HTTP, when the server hangs after connecting', () => {
    const forwarder = new TcpForwarder('127.0.0.1', Number(new URL(TEST_DATABASE_URL).port || 5432));
    let t: TestApp;

    beforeAll(async () => {
      await forwarder.start();
      t = await startTestApp({ DATABASE_URL: via(forwarder.port), DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
    });
    afterAll(async () => {
      forwarder.thaw();
      await t?.close();
      await forwarder.stop();
    });

    it('a request that needs it answers 503 with Retry-After once the client-side timeout passes, and is served again after', async () => {
      const admin = await newTenant(t);
      const id = randomUUID();
      expect((await as(t, admin.key).get(`/applications/${id}`)).status).toBe(404);
      forwarder.freeze();
      const started = Date.now();
      const res = await as(t, admin.key).get(`/applications/${randomUUID()}`);
      const waited = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      // Not before the server could have answered, and not much after the client's own bound.
      expect(waited).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS);
      expect(waited).toBeLessThan(STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_GRACE_MS + 20_000);
      forwarder.thaw();
      let status = 0;
      for (let i = 0; i < 50 && status !== 404; i++) {
        status = (await as(t, admin.key).get(`/applications/${id}`)).status;
        if (status !== 404) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(status).toBe(404);
    });
  });
});
