import { FixedClock } from '../testing/in-memory-ports';
import { carriedTat, gcra, InMemoryRateCounter } from './rate-counter';

const minute = { limit: 3, windowSeconds: 60 };

describe('gcra', () => {
  it('allows `limit` requests at once, then refuses until one interval has passed', () => {
    const now = 1_000_000;
    let tat: number | undefined;
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const step = gcra(tat, now, minute);
      expect(step.allowed).toBe(true);
      remaining.push(step.state.remaining);
      tat = step.newTat;
    }
    expect(remaining).toEqual([2, 1, 0]);
    const refused = gcra(tat, now, minute);
    expect(refused).toMatchObject({ allowed: false, newTat: tat, state: { remaining: 0, resetSeconds: 60 } });
    expect(refused.retryMs).toBe(20_000);
    expect(gcra(tat, now + 19_999, minute).allowed).toBe(false);
    expect(gcra(tat, now + 20_000, minute)).toMatchObject({ allowed: true, state: { remaining: 0 } });
  });

  it('refills the whole bucket after a window of silence', () => {
    const first = gcra(undefined, 0, minute);
    expect(gcra(first.newTat, 60_000, minute).state.remaining).toBe(2);
  });
});

describe('InMemoryRateCounter', () => {
  it('counts each bucket apart', async () => {
    const counter = new InMemoryRateCounter(new FixedClock());
    for (let i = 0; i < 3; i++) expect((await counter.take([{ key: 'a', limit: minute }])).allowed).toBe(true);
    expect(await counter.take([{ key: 'a', limit: minute }])).toMatchObject({ allowed: false, retryAfterSeconds: 20 });
    expect((await counter.take([{ key: 'b', limit: minute }])).allowed).toBe(true);
  });

  it('takes from every bucket or from none', async () => {
    const counter = new InMemoryRateCounter(new FixedClock());
    const one = { limit: 1, windowSeconds: 60 };
    expect((await counter.take([{ key: 'tight', limit: one }])).allowed).toBe(true);
    // 'tight' refuses, so 'wide' must not lose a unit.
    const refused = await counter.take([
      { key: 'wide', limit: minute },
      { key: 'tight', limit: one },
    ]);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBe(60);
    const wide = await counter.take([{ key: 'wide', limit: minute }]);
    expect(wide).toMatchObject({ allowed: true, buckets: [{ remaining: 2, limit: minute }] });
  });

  it('allows again once time has passed', async () => {
    const clock = new FixedClock();
    const counter = new InMemoryRateCounter(clock);
    const one = { limit: 1, windowSeconds: 10 };
    await counter.take([{ key: 'k', limit: one }]);
    expect((await counter.take([{ key: 'k', limit: one }])).allowed).toBe(false);
    clock.advance(10_000);
    expect(await counter.take([{ key: 'k', limit: one }])).toMatchObject({
      allowed: true,
      retryAfterSeconds: 0,
      buckets: [{ remaining: 0, resetSeconds: 10 }],
    });
  });
});

describe('a changed limit carries its count over (no fresh burst)', () => {
  const five = { limit: 5, windowSeconds: 60 };

  it('a key that used its 5 per 60 s gets nothing more by moving to 5/61, 5/62, ... (issue 22 section 3)', async () => {
    const clock = new FixedClock();
    const counter = new InMemoryRateCounter(clock);
    let admitted = 0;
    for (let window = 60; window < 110; window++) {
      const limit = { limit: 5, windowSeconds: window };
      for (let i = 0; i < 5; i++) if ((await counter.take([{ key: 'application:a', limit }])).allowed) admitted++;
      clock.advance(2);
    }
    expect(admitted).toBe(5);
  });

  it('keeps the requests still counted, each at the new interval, at most a whole new window', () => {
    const now = 1_000_000;
    // Two of five used under 5/60 (24 s of debt): two of ten under 10/60 (12 s).
    expect(carriedTat({ tat: now + 24_000, intervalMs: 12_000 }, now, { limit: 10, windowSeconds: 60 })).toBe(now + 12_000);
    // Exhausted under 100/60, tightened to 5/60: exhausted, one whole window to wait, not 100 intervals.
    expect(carriedTat({ tat: now + 60_000, intervalMs: 600 }, now, five)).toBe(now + 60_000);
    // Same interval, or a bucket already full: unchanged.
    expect(carriedTat({ tat: now + 24_000, intervalMs: 12_000 }, now, five)).toBe(now + 24_000);
    expect(carriedTat({ tat: now - 1, intervalMs: 12_000 }, now, { limit: 1, windowSeconds: 1 })).toBe(now - 1);
    expect(carriedTat(undefined, now, five)).toBeUndefined();
  });

  it('raising a limit gives the difference, not a new burst on top of what was used', async () => {
    const counter = new InMemoryRateCounter(new FixedClock());
    for (let i = 0; i < 5; i++) await counter.take([{ key: 'k', limit: five }]);
    const raised = { limit: 10, windowSeconds: 60 };
    let admitted = 0;
    for (let i = 0; i < 20; i++) if ((await counter.take([{ key: 'k', limit: raised }])).allowed) admitted++;
    expect(admitted).toBe(5);
  });
});
