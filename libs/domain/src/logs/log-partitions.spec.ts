import { Clock } from '../shared/clock';
import { addIntervals, LogPartition, LogPartitionInterval, LogPartitions, MaintainLogPartitions } from './log-partitions';

class RecordingPartitions extends LogPartitions {
  readonly calls: [string, string, LogPartitionInterval][] = [];
  async ensure(from: Date, to: Date, interval: LogPartitionInterval): Promise<string[]> {
    this.calls.push([from.toISOString(), to.toISOString(), interval]);
    return ['a', 'b'];
  }
  async list(): Promise<LogPartition[]> {
    return [];
  }
  async dropBefore(): Promise<string[]> {
    return [];
  }
}

const at = (iso: string): Clock => ({ now: () => new Date(iso) });

describe('MaintainLogPartitions', () => {
  it('asks for the partitions from now to three intervals ahead, in its interval, and counts those created', async () => {
    const partitions = new RecordingPartitions();
    expect(await new MaintainLogPartitions(partitions, at('2026-11-30T23:00:00Z'), 'month').execute()).toBe(2);
    await new MaintainLogPartitions(partitions, at('2026-11-30T23:00:00Z'), 'week').execute();
    await new MaintainLogPartitions(partitions, at('2026-11-30T23:00:00Z'), 'day', 6).execute();
    expect(partitions.calls).toEqual([
      ['2026-11-30T23:00:00.000Z', '2027-02-28T23:00:00.000Z', 'month'],
      ['2026-11-30T23:00:00.000Z', '2026-12-21T23:00:00.000Z', 'week'],
      ['2026-11-30T23:00:00.000Z', '2026-12-07T23:00:00.000Z', 'day'],
    ]);
  });

  it('adds months without running into the next one from the end of a month', () => {
    expect(addIntervals(new Date('2027-01-31T12:00:00Z'), 'month', 1).toISOString()).toBe('2027-02-28T12:00:00.000Z');
    expect(addIntervals(new Date('2027-12-15T00:00:00Z'), 'month', 2).toISOString()).toBe('2028-02-15T00:00:00.000Z');
  });
});
