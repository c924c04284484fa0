import { IngestLogs } from './log-commands';
import { AuditEvent } from './log';
import { InMemoryLogRepository } from '../testing/in-memory-ports';
import { aSystemEvent } from '../testing/audit-events';

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
    expect(await ingest.execute([])).toBe(0);
    expect(await ingest.execute([aSystemEvent('acme'), aSystemEvent('acme')])).toBe(2);
    expect(repo.appended.map((batch) => batch.length)).toEqual([2]);
  });
});
