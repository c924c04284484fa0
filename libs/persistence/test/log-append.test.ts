import { randomUUID } from 'node:crypto';
import { AuditEvent, LogIdConflictError } from '@gatehouse/domain';
import { Database, openDatabase, TypeormLogChainWriter } from '@gatehouse/persistence';
import { TEST_DATABASE_URL } from '@gatehouse/test-support/test-env';
import { aSystemEvent } from '@gatehouse/domain/testing';

// The write paths of TypeormLogChainWriter.append against real PostgreSQL, with the interleavings a worker's lanes
// (two flushes in flight) can produce held in place. Chain validity is checked with the database's own hash
// function, as `gatehouse logs verify` recomputes it.

function aLog(tenantId: string, i: number, over: Partial<AuditEvent> = {}): AuditEvent {
  return aSystemEvent(tenantId, { entityId: `tok_${i}`, message: `Token tok_${i} read`, createdAt: new Date(Date.UTC(2026, 10, 1) + i * 1000), ...over });
}

describe('TypeormLogChainWriter.append on PostgreSQL', () => {
  let database: Database;

  beforeAll(async () => (database = await openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 4 })));
  afterAll(() => database?.close());

  /** Every log of the tenant at positions 1..n, each hash the chain hash of the one before, and the head on the last. */
  async function chainOf(tenantId: string): Promise<{ logs: number; valid: boolean; entities: string[] }> {
    // (Aliased: an output column `seq` of type text would be what ORDER BY seq sorts.)
    const rows: { position: string; ok: boolean; entity_id: string }[] = await database.dataSource.query(
      `SELECT seq::text AS position, entity_id, hash = log_chain(tenant_id, seq, id, created_at, actor_type, actor_id, entity_type, entity_id,
         operation, message, request_id, source_ip, user_agent) OVER (ORDER BY seq) AS ok
       FROM logs WHERE tenant_id = $1 ORDER BY seq`,
      [tenantId],
    );
    const [head] = await database.dataSource.query(`SELECT seq::text FROM log_chains WHERE tenant_id = $1`, [tenantId]);
    const valid = rows.every((r, i) => r.ok && Number(r.position) === i + 1) && Number(head?.seq ?? 0) === rows.length;
    return { logs: rows.length, valid, entities: rows.map((r) => r.entity_id) };
  }

  it("chains a batch whose other tenant's head it was reading while a write of its own was refused", async () => {
    const [x, y] = [randomUUID(), randomUUID()];
    const manager = database.dataSource.manager;
    const writer = new TypeormLogChainWriter(manager);
    await writer.append([aLog(x, 0)]); // x's head: created, and known to the writer
    await new TypeormLogChainWriter(manager).append([aLog(y, 0)]); // y's head: there, but not known to the writer yet
    // The writer reads y's head (a batch of x and y) while its write of x fails, which makes it forget x's head:
    // the read is held until that failure, as a slow read on a loaded database lets it happen.
    const query = manager.query.bind(manager);
    let failing: Promise<number> | undefined;
    const spy = jest.spyOn(manager, 'query').mockImplementation(async (text: string, params?: Parameters<typeof query>[1]) => {
      if (/^SELECT tenant_id, seq::text AS seq/.test(text) && !/FOR UPDATE/.test(text)) await failing?.catch(() => undefined);
      return query(text, params);
    });
    try {
      failing = writer.append([aLog(x, 1, { requestId: 'r'.repeat(200) })]); // too long for request_id: refused by PostgreSQL
      const both = writer.append([aLog(x, 1), aLog(y, 1)]);
      await expect(failing).rejects.toMatchObject({ code: '22001' });
      expect(await both).toBe(2);
    } finally {
      spy.mockRestore();
    }
    // And the writer goes on: a next batch of both, in one statement after the heads it now knows.
    expect(await writer.append([aLog(x, 2), aLog(y, 2)])).toBe(2);
    expect(await chainOf(x)).toEqual({ logs: 3, valid: true, entities: ['tok_0', 'tok_1', 'tok_2'] });
    expect(await chainOf(y)).toEqual({ logs: 3, valid: true, entities: ['tok_0', 'tok_1', 'tok_2'] });
  });

  describe('a log id stored under another tenant', () => {
    const messages = async (ids: string[]) =>
      (await database.dataSource.query(`SELECT id, tenant_id, message FROM logs WHERE id = ANY($1::uuid[]) ORDER BY message`, [ids])) as {
        id: string;
        tenant_id: string;
        message: string;
      }[];
    async function outbox(log: AuditEvent, age = 60_000): Promise<void> {
      await database.dataSource.query(
        `INSERT INTO audit_outbox (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at)
         VALUES ($1, $2, 'system', 'token', $3, 'read', $4, now() - make_interval(secs => $5))`,
        [log.id, log.tenantId, log.entityId, log.message, age / 1000],
      );
    }

    it('is a conflict: the others are written, the stored log is untouched, and the error names the id only', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const writer = new TypeormLogChainWriter(database.dataSource.manager);
      const taken = aLog(a, 0, { message: 'a' });
      await writer.append([taken, aLog(a, 1)]);
      const error = await writer.append([aLog(b, 0, { id: taken.id, message: 'b' }), aLog(b, 1)]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LogIdConflictError);
      expect((error as Error).message).toBe(`log id(s) already stored under another tenant, not written: ${taken.id}`);
      expect((error as Error).message).not.toContain(a);
      // The same id twice in one batch under two tenants: the second is a conflict too.
      const twice = randomUUID();
      await expect(writer.append([aLog(b, 2, { id: twice }), aLog(a, 2, { id: twice }), aLog(a, 3)])).rejects.toMatchObject({
        conflicts: [{ id: twice, tenantId: a }],
      });
      // A duplicate (same id, same tenant) is still skipped, also behind a conflicting log of its id in one batch.
      expect(await writer.append([taken])).toBe(0);
      await expect(writer.append([aLog(b, 3, { id: taken.id }), taken])).rejects.toMatchObject({ conflicts: [{ id: taken.id, tenantId: b }] });
      expect(await messages([taken.id])).toEqual([{ id: taken.id, tenant_id: a, message: 'a' }]);
      expect(await chainOf(a)).toEqual({ logs: 3, valid: true, entities: ['tok_0', 'tok_1', 'tok_3'] });
      expect(await chainOf(b)).toEqual({ logs: 2, valid: true, entities: ['tok_1', 'tok_2'] });
    });

    it('written concurrently by another tenant, ends as the same conflict, not as a retry', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const manager = database.dataSource.manager;
      const id = randomUUID();
      let commit!: () => void;
      const held = new Promise<void>((resolve) => (commit = resolve));
      let inserted!: () => void;
      const insertedA = new Promise<void>((resolve) => (inserted = resolve));
      // a's write of the id, inserted and held open before its commit.
      const aWrite = manager.transaction(async (em) => {
        await new TypeormLogChainWriter(em).append([aLog(a, 0, { id, message: 'a' })]);
        inserted();
        await held;
      });
      await insertedA;
      const bWrite = new TypeormLogChainWriter(manager).append([aLog(b, 0, { id, message: 'b' }), aLog(b, 1)]).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 300)); // b's insert waits on a's row
      commit();
      await aWrite;
      const error = await bWrite;
      expect(error).toBeInstanceOf(LogIdConflictError);
      expect((error as LogIdConflictError).conflicts).toEqual([{ id, tenantId: b }]);
      expect(await messages([id])).toEqual([{ id, tenant_id: a, message: 'a' }]);
      expect(await chainOf(a)).toEqual({ logs: 1, valid: true, entities: ['tok_0'] });
      expect(await chainOf(b)).toEqual({ logs: 1, valid: true, entities: ['tok_1'] });
    });

    it('leaves the event in the outbox, reports it, and relays the events behind it', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const writer = new TypeormLogChainWriter(database.dataSource.manager);
      const taken = aLog(a, 0, { message: 'a' });
      await writer.append([taken]);
      const event = aLog(b, 0, { id: taken.id, message: 'b' });
      // Older than every outbox row already there (other suites leave rows recorded at their fixed clocks' times, which
      // grow old as the calendar moves on), and relayed up to just after them: nothing else is in this relay's way.
      const [{ oldest }] = (await database.dataSource.query(`SELECT coalesce(min(created_at), now()) AS oldest FROM audit_outbox`)) as [{ oldest: Date }];
      const age = Math.max(0, Date.now() - new Date(oldest).getTime()) + 2 * 86_400_000;
      await outbox(event, age); // the oldest: first in the relay's order
      const behind = aLog(b, 1);
      await outbox(behind, age - 1000);
      const before = new Date(Date.now() - age + 2000);
      try {
        // One at a time: the conflicting event must not take the relay's every claim.
        await expect(writer.relayOutbox(before, 1)).resolves.toBe(1);
        await expect(writer.relayOutbox(before, 1)).rejects.toThrow(`log id(s) already stored under another tenant, left in audit_outbox: ${taken.id}`);
        await expect(writer.relayOutbox(before, 1)).rejects.toBeInstanceOf(LogIdConflictError); // reported on every run
        const left = await database.dataSource.query('SELECT id, tenant_id FROM audit_outbox WHERE tenant_id = $1', [b]);
        expect(left).toEqual([{ id: event.id, tenant_id: b }]);
        expect(await messages([taken.id])).toEqual([{ id: taken.id, tenant_id: a, message: 'a' }]);
        expect(await chainOf(b)).toEqual({ logs: 1, valid: true, entities: ['tok_1'] });
        // b's job with that id neither writes it nor deletes the event; a's (a duplicate) does not delete b's event either.
        await expect(writer.append([event])).rejects.toBeInstanceOf(LogIdConflictError);
        expect(await writer.append([taken])).toBe(0);
        expect(await database.dataSource.query('SELECT id FROM audit_outbox WHERE tenant_id = $1', [b])).toEqual([{ id: event.id }]);
        expect(await chainOf(a)).toEqual({ logs: 1, valid: true, entities: ['tok_0'] });
      } finally {
        await database.dataSource.query('DELETE FROM audit_outbox WHERE id = $1', [event.id]);
      }
    });

    // The one-statement path, as this writer calls it and as a writer of the previous version (during a rolling
    // deploy) does: `log_chain_append` without the outbox rows' tenants, which the database pairs from the batch.
    it.each([
      ['this version', (text: string, params: unknown[]) => [text, params]],
      [
        'the previous version (7 arguments)',
        (text: string, params: unknown[]) =>
          text.startsWith('SELECT log_chain_append(')
            ? ['SELECT log_chain_append($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::json)', [params[0], ...params.slice(2)]]
            : [text, params],
      ],
    ])("never deletes another tenant's pending outbox event of its id, in the one-statement path either (%s)", async (_name, call) => {
      const [a, b] = [randomUUID(), randomUUID()];
      const manager = database.dataSource.manager;
      const writer = new TypeormLogChainWriter(manager);
      await writer.append([aLog(b, 0)]); // b's head known to the writer: its next batch is one statement
      // a's event, committed by the API, its job not run yet; recorded just now, so no relay takes it meanwhile.
      const pending = aLog(a, 0, { message: 'a' });
      await outbox(pending, 0);
      const eventOf = () => database.dataSource.query('SELECT id, tenant_id FROM audit_outbox WHERE id = $1', [pending.id]);
      const query = manager.query.bind(manager);
      const statements: string[] = [];
      const spy = jest.spyOn(manager, 'query').mockImplementation((text: string, params?: Parameters<typeof query>[1]) => {
        const [sent, values] = call(text, (params ?? []) as unknown[]) as [string, unknown[]];
        statements.push(sent);
        return query(sent, values);
      });
      try {
        // A queued log of b with that id (queued logs' ids are their producer's): written, first come.
        expect(await writer.append([aLog(b, 1, { id: pending.id, message: 'b' })])).toBe(1);
        expect(statements.filter((text) => text.startsWith('SELECT log_chain_append('))).toHaveLength(1);
        expect(await eventOf()).toEqual([{ id: pending.id, tenant_id: a }]);
        // a's job then meets the conflict, and a's event is still there for the relay to report.
        await expect(writer.append([pending])).rejects.toMatchObject({ conflicts: [{ id: pending.id, tenantId: a }] });
        expect(await eventOf()).toEqual([{ id: pending.id, tenant_id: a }]);
        expect(await messages([pending.id])).toEqual([{ id: pending.id, tenant_id: b, message: 'b' }]);
        expect(await chainOf(b)).toEqual({ logs: 2, valid: true, entities: ['tok_0', 'tok_1'] });
        // And the path still deletes its own events, both ways.
        const own = aLog(b, 2);
        await outbox(own, 0);
        expect(await writer.append([own])).toBe(1);
        expect(await database.dataSource.query('SELECT id FROM audit_outbox WHERE id = $1', [own.id])).toEqual([]);
      } finally {
        spy.mockRestore();
        await database.dataSource.query('DELETE FROM audit_outbox WHERE id = $1', [pending.id]);
      }
    });
  });

  it('keeps every chain whole with three writers, two flushes in flight each, refused batches, redeliveries and the relay', async () => {
    const tenants = Array.from({ length: 4 }, () => randomUUID());
    const unhandled: unknown[] = [];
    const onUnhandled = (error: unknown) => unhandled.push(error);
    process.on('unhandledRejection', onUnhandled);
    const pools = await Promise.all([0, 1, 2].map(() => openDatabase({ url: TEST_DATABASE_URL, dataDir: '', poolSize: 3 })));
    const written = new Set<string>(); // logs whose append resolved, and events put in the outbox
    const sent: AuditEvent[] = [];
    const refusedGood: string[] = [];
    const relayErrors: string[] = [];
    const everyWrite: Promise<unknown>[] = [];
    let n = 0;
    try {
      const writers = pools.map((p) => new TypeormLogChainWriter(p.dataSource.manager));
      const lane = async (writer: TypeormLogChainWriter, which: number) => {
        for (let round = 0; round < 30; round++) {
          const inFlight: Promise<unknown>[] = [];
          for (let flush = 0; flush < 2; flush++) {
            // Each lane has its own tenants, and now and then a batch spans another lane's (a job with several).
            const batch = tenants
              .filter((_, t) => t % 2 === which || Math.random() < 0.3)
              .flatMap((t) => Array.from({ length: 1 + (n % 4) }, () => aLog(t, n++)));
            const bad = Math.random() < 0.1;
            if (bad) batch.push(aLog(tenants[which]!, n++, { requestId: 'r'.repeat(200) }));
            if (Math.random() < 0.2 && sent.length > 0) batch.push(sent[Math.floor(Math.random() * sent.length)]!); // a redelivered job
            if (Math.random() < 0.15) {
              // Events left in the outbox; the relay and (half the time) a job race to write them.
              const events = [aLog(tenants[n % 4]!, n++), aLog(tenants[n % 4]!, n++)];
              await pools[0]!.dataSource.query(
                `INSERT INTO audit_outbox (id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at)
                 SELECT id, tenant_id, actor_type, entity_type, entity_id, operation, message, created_at FROM json_populate_recordset(NULL::audit_outbox, $1::json)`,
                [
                  JSON.stringify(
                    events.map((e) => ({
                      id: e.id,
                      tenant_id: e.tenantId,
                      actor_type: e.actorType,
                      entity_type: e.entityType,
                      entity_id: e.entityId,
                      operation: e.operation,
                      message: e.message,
                      created_at: e.createdAt,
                    })),
                  ),
                ],
              );
              events.forEach((e) => written.add(e.id));
              if (Math.random() < 0.5) batch.push(...events);
              inFlight.push(writer.relayOutbox(new Date(), 50).catch((error: Error) => relayErrors.push(error.message)));
            }
            sent.push(...batch.filter((l) => l.requestId === undefined));
            inFlight.push(
              writer.append(batch).then(
                () => batch.forEach((l) => written.add(l.id)),
                (error: { code?: string; message?: string }) => {
                  if (!bad) refusedGood.push(`${error.code} ${error.message}`);
                },
              ),
            );
          }
          everyWrite.push(...inFlight);
          // Sometimes the lane waits for both flushes, sometimes it sends the next while one is still in flight.
          await (Math.random() < 0.5 ? Promise.all(inFlight) : inFlight[0]);
        }
      };
      await Promise.all(writers.flatMap((w) => [lane(w, 0), lane(w, 1)]));
      await Promise.all(everyWrite); // the flushes a lane did not wait for (each settles: handled above)
      await writers[0]!.relayOutbox(new Date(), 100_000);

      expect(refusedGood).toEqual([]);
      expect(relayErrors).toEqual([]);
      expect(unhandled).toEqual([]);
      const stored: { id: string }[] = await database.dataSource.query('SELECT id FROM logs WHERE tenant_id = ANY($1::uuid[])', [tenants]);
      expect(stored.length).toBe(written.size);
      expect(stored.every((r) => written.has(r.id))).toBe(true);
      for (const t of tenants) expect((await chainOf(t)).valid).toBe(true);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await Promise.all(pools.map((p) => p.close()));
    }
  });
});
