import { IngestLogs } from './log-commands';
import { Log } from './log';
import { InMemoryLogRepository } from '../testing/in-memory-ports';

describe('IngestLogs', () => {
  class RecordingLogs extends InMemoryLogRepository {
    appended: Log[][] = [];
    override async append(logs: Log[]): Promise<number> {
      this.appended.push(logs);
      return logs.length;
    }
  }

  it('hands the batch to the repository in one call, and nothing for an empty batch', async () => {
    const repo = new RecordingLogs();
    const ingest = new IngestLogs(repo);
    const log: Log = {
      id: '11111111-1111-8111-8111-111111111111',
      tenantId: '6f1c1e0e-3b7a-4a43-9f55-0a4b7e1d2c10',
      actorId: null,
      actorType: null,
      entityType: 'token',
      entityId: 'tok_1',
      operation: 'read',
      message: 'Token read',
      createdAt: new Date('2026-11-21T10:00:00.000Z'),
    };
    expect(await ingest.execute([])).toBe(0);
    expect(await ingest.execute([log, { ...log, id: '22222222-2222-8222-8222-222222222222' }])).toBe(2);
    expect(repo.appended.map((batch) => batch.length)).toEqual([2]);
  });
});
