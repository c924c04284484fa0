import { principalOf } from '../applications/principal';
import { Application } from '../applications/application';
import { ValidationError } from '../shared/domain-error';
import { Page, PageQuery } from '../shared/page';
import { Log } from './log';
import { LogFilter } from './log.repository';
import { ListLogs } from './log-queries';
import { RelayAuditOutbox } from './log-commands';
import { FixedClock, InMemoryLogRepository } from '../testing/in-memory-ports';

const TENANT = '6f1c1e0e-3b7a-4a43-9f55-0a4b7e1d2c10';

class SpyLogs extends InMemoryLogRepository {
  listed: { tenantId: string; filter: LogFilter; page: PageQuery }[] = [];
  relayCalls: Date[] = [];
  backlog = 0;

  override async relayOutbox(recordedBefore: Date, limit: number): Promise<number> {
    this.relayCalls.push(recordedBefore);
    const n = Math.min(limit, this.backlog);
    this.backlog -= n;
    return n;
  }
  override async list(tenantId: string, filter: LogFilter, page: PageQuery): Promise<Page<Log>> {
    this.listed.push({ tenantId, filter, page });
    return { items: [], size: page.size, page: page.page, totalItems: 0 };
  }
}

const principal = principalOf({ id: 'a', tenantId: TENANT, type: 'management', permissions: ['log:read'], canCreateExpiringApplications: null } as Application);
const page = { page: 1, size: 20 };

function errorsOf(promise: () => Promise<unknown>): Promise<Record<string, string[]>> {
  return promise().then(
    () => {
      throw new Error('expected a ValidationError');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).fieldErrors ?? {};
    },
  );
}

describe('ListLogs', () => {
  it("lists the caller's tenant with the filter as given", async () => {
    const repo = new SpyLogs();
    const filter = { entityType: 'token', entityId: 'tok_1', startDate: new Date('2026-01-01T00:00:00Z'), endDate: new Date('2026-02-01T00:00:00Z') };
    await new ListLogs(repo).execute(principal, filter, page);
    expect(repo.listed).toEqual([{ tenantId: TENANT, filter, page }]);
  });

  it('refuses an unknown entity type, an unparsable date and an empty or reversed range', async () => {
    const list = new ListLogs(new SpyLogs());
    expect(await errorsOf(() => list.execute(principal, { entityType: 'spaceship' }, page))).toHaveProperty('entity_type');
    expect(await errorsOf(() => list.execute(principal, { startDate: new Date('nope') }, page))).toHaveProperty('start_date');
    const at = new Date('2026-01-01T00:00:00Z');
    expect(await errorsOf(() => list.execute(principal, { startDate: at, endDate: at }, page))).toEqual({
      end_date: ['must be later than start_date'],
    });
  });
});

describe('RelayAuditOutbox', () => {
  it('moves the backlog older than the minimum age in batches until a short one', async () => {
    const repo = new SpyLogs();
    repo.backlog = 2500;
    const clock = new FixedClock('2026-11-21T10:00:00.000Z');
    expect(await new RelayAuditOutbox(repo, clock).execute(5000, 1000)).toBe(2500);
    expect(repo.relayCalls).toHaveLength(3);
    expect(repo.relayCalls[0]!.toISOString()).toBe('2026-11-21T09:59:55.000Z');
  });
});
