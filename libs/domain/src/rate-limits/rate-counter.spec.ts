import { FixedClock } from '../testing/in-memory-ports';
import { gcra, InMemoryRateCounter } from './rate-counter';

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
    const refused = await counter.take([{ key: 'wide', limit: minute }, { key: 'tight', limit: one }]);
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
    expect(await counter.take([{ key: 'k', limit: one }])).toMatchObject({ allowed: true, retryAfterSeconds: 0, buckets: [{ remaining: 0, resetSeconds: 10 }] });
  });
});
