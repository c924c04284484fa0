import { IngestLogs } from './log-commands';
import { AuditEvent } from './log';
import { InMemoryLogRepository } from '../testing/in-memory-ports';

describe('IngestLogs', () => {
  class RecordingLogs extends InMemoryLogRepository {
    appended: AuditEvent[][] = [];
    override async append(logs: AuditEvent[]): Promise<number> {
      this.appended.push(logs);
      return logs.length;
    }
  }

  it('hands the batch to the repository in one call, and nothing for an empty batch', async () => {
    const repo = new RecordingLogs();
    const ingest = new IngestLogs(repo);
    const log: AuditEvent = {
      id: '11111111-1111-8111-8111-111111111111',
      tenantId: 'acme',
      actorId: null,
      actorType: null,
      entityType: 'token',
      entityId: 'tok_1',
      operation: 'read',
      message: 'Token read',
      createdAt: new Date(0),
    };
    expect(await ingest.execute([])).toBe(0);
    expect(await ingest.execute([log, { ...log, id: '22222222-2222-8222-8222-222222222222' }])).toBe(2);
    expect(repo.appended.map((batch) => batch.length)).toEqual([2]);
  });
});
