import { AuditEvent, IngestLogs, LogChainWriter, UUID_PATTERN } from '@gatehouse/domain';
import { InvalidJobError, JobHandler, JobHandlerRegistry } from './job-handler';
import { JobName, QueueName } from './jobs';
import { LogBatchWriter } from './log-batch-writer';
import { derivedLogId } from './log-ids';

function log(id: string): AuditEvent {
  return {
    id,
    tenantId: '6f1c1e0e-3b7a-4a43-9f55-0a4b7e1d2c10',
    actorId: null,
    actorType: 'system',
    entityType: 'token',
    entityId: 'tok',
    operation: 'read',
    message: id,
    createdAt: new Date('2026-11-21T10:00:00.000Z'),
  };
}

/** Records each batch; fails any batch holding a log whose message starts with "poison". */
class FakeIngest extends IngestLogs {
  batches: string[][] = [];
  constructor() {
    super(undefined as unknown as LogChainWriter);
  }
  override async execute(logs: AuditEvent[]): Promise<number> {
    this.batches.push(logs.map((l) => l.id));
    if (logs.some((l) => l.message.startsWith('poison'))) throw new Error('poisoned batch');
    return logs.length;
  }
}

describe('LogBatchWriter', () => {
  it('gathers concurrent writes into one insert and resolves each after it', async () => {
    const ingest = new FakeIngest();
    const writer = new LogBatchWriter(ingest, { maxRows: 100, maxWaitMs: 5, maxParallelFlushes: 1 });
    await Promise.all([writer.write([log('a')]), writer.write([log('b'), log('c')]), writer.write([log('d')])]);
    expect(ingest.batches).toEqual([['a', 'b', 'c', 'd']]);
  });

  it('starts a flush as soon as maxRows wait, without splitting a job', async () => {
    const ingest = new FakeIngest();
    const writer = new LogBatchWriter(ingest, { maxRows: 2, maxWaitMs: 60_000, maxParallelFlushes: 1 });
    const writes = [writer.write([log('a')]), writer.write([log('b'), log('c')]), writer.write([log('d')])];
    await writer.close();
    await Promise.all(writes);
    expect(ingest.batches).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('splits the logs into lanes by tenant: a job spanning lanes completes once each lane committed its part', async () => {
    const ingest = new FakeIngest();
    const writer = new LogBatchWriter(ingest, { maxRows: 100, maxWaitMs: 5, maxParallelFlushes: 2 });
    // Tenants whose first 8 hex digits are even and odd: lanes 0 and 1.
    const inLane = (lane: number, id: string): AuditEvent => ({ ...log(id), tenantId: `0000000${lane}-3b7a-4a43-9f55-0a4b7e1d2c10` });
    await Promise.all([writer.write([inLane(0, 'a'), inLane(1, 'b')]), writer.write([inLane(1, 'c')]), writer.write([inLane(0, 'd')])]);
    expect(ingest.batches.map((b) => b.join('')).sort()).toEqual(['ad', 'bc']);
  });

  it('keeps flushesPerLane flushes of one lane in flight at once, and no more', async () => {
    const started: string[][] = [];
    const finish: (() => void)[] = [];
    const ingest = new (class extends FakeIngest {
      override execute(logs: AuditEvent[]): Promise<number> {
        started.push(logs.map((l) => l.id));
        return new Promise((resolve) => finish.push(() => resolve(logs.length)));
      }
    })();
    const writer = new LogBatchWriter(ingest, { maxRows: 1, maxWaitMs: 60_000, maxParallelFlushes: 1, flushesPerLane: 2 });
    const writes = ['a', 'b', 'c'].map((id) => writer.write([log(id)]));
    expect(started).toEqual([['a'], ['b']]);
    finish.shift()!();
    await writes[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([['a'], ['b'], ['c']]);
    finish.splice(0).forEach((f) => f());
    await Promise.all(writes);
  });

  it('retries the jobs of a failed batch one by one, so only the bad one fails', async () => {
    const ingest = new FakeIngest();
    const writer = new LogBatchWriter(ingest, { maxRows: 100, maxWaitMs: 5, maxParallelFlushes: 1 });
    const results = await Promise.allSettled([writer.write([log('a')]), writer.write([{ ...log('b'), message: 'poison' }]), writer.write([log('c')])]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(ingest.batches).toEqual([['a', 'b', 'c'], ['a'], ['b'], ['c']]);
  });
});

describe('JobHandlerRegistry', () => {
  const handler = (job: JobName): JobHandler => ({ job, handle: async () => undefined }) as unknown as JobHandler;

  it('refuses to boot without exactly one handler per job', () => {
    expect(() => new JobHandlerRegistry([handler(JobName.AuditLog), handler(JobName.AuditLogBatch)])).toThrow(/No handler for job\(s\) expire-application/);
    expect(() => new JobHandlerRegistry([...Object.values(JobName).map(handler), handler(JobName.AuditLog)])).toThrow(/Two handlers for job 'audit-log'/);
  });

  it('answers an unknown job name with an InvalidJobError (the failed set, not a crash)', async () => {
    const registry = new JobHandlerRegistry(Object.values(JobName).map(handler));
    await expect(registry.run('audit-logg', {}, { queue: QueueName.AuditLogs, id: '1', timestamp: 0, attempt: 1 })).rejects.toBeInstanceOf(InvalidJobError);
  });
});

describe('derivedLogId', () => {
  const context = { queue: QueueName.AuditLogs, id: '42', timestamp: 1_763_700_000_000, attempt: 1 };

  it('is a UUID that is the same on every retry and differs per entry and per job', () => {
    const id = derivedLogId(context, 0);
    expect(id).toMatch(UUID_PATTERN);
    expect(derivedLogId({ ...context, attempt: 3 }, 0)).toBe(id);
    expect(derivedLogId(context, 1)).not.toBe(id);
    expect(derivedLogId({ ...context, id: '43' }, 0)).not.toBe(id);
    expect(derivedLogId({ ...context, timestamp: context.timestamp + 1 }, 0)).not.toBe(id);
  });
});
