import { FixedClock } from '../testing/in-memory-ports';
import { ApplicationUse, LastUseRecorder, LastUseStore } from './last-use';

class RecordingStore extends LastUseStore {
  writes: ApplicationUse[][] = [];
  failing = false;
  async recordLastUse(uses: ApplicationUse[]): Promise<void> {
    if (this.failing) throw new Error('database down');
    this.writes.push(uses);
  }
}

function setup() {
  const clock = new FixedClock('2026-11-21T10:00:30.500Z');
  const store = new RecordingStore();
  return { clock, store, recorder: new LastUseRecorder(store, clock) };
}

describe('LastUseRecorder', () => {
  it('writes nothing until flushed, then each application once, to the minute', async () => {
    const s = setup();
    for (let i = 0; i < 100; i++) s.recorder.touch('a');
    s.recorder.touch('b');
    expect(s.store.writes).toEqual([]);
    await s.recorder.flush();
    const minute = new Date('2026-11-21T10:00:00.000Z');
    expect(s.store.writes).toEqual([
      [
        { applicationId: 'a', at: minute },
        { applicationId: 'b', at: minute },
      ],
    ]);
    await s.recorder.flush();
    expect(s.store.writes).toHaveLength(1);
  });

  it('writes an application at most once a minute', async () => {
    const s = setup();
    s.recorder.touch('a');
    await s.recorder.flush();
    s.clock.advance(20_000); // 10:00:50, the same minute
    s.recorder.touch('a');
    await s.recorder.flush();
    expect(s.store.writes).toHaveLength(1);
    s.clock.advance(10_000); // 10:01:00
    s.recorder.touch('a');
    await s.recorder.flush();
    expect(s.store.writes).toEqual([
      [{ applicationId: 'a', at: new Date('2026-11-21T10:00:00.000Z') }],
      [{ applicationId: 'a', at: new Date('2026-11-21T10:01:00.000Z') }],
    ]);
  });

  it('keeps what a failed write held for the next flush', async () => {
    const s = setup();
    s.recorder.touch('a');
    s.store.failing = true;
    await expect(s.recorder.flush()).rejects.toThrow('database down');
    s.store.failing = false;
    await s.recorder.flush();
    expect(s.store.writes).toEqual([[{ applicationId: 'a', at: new Date('2026-11-21T10:00:00.000Z') }]]);
  });
});
