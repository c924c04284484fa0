import { retryAfterMs, retryingFetch } from './retry';

function answers(...responses: Array<[number, Record<string, string>?]>): { base: (req: Request) => Promise<Response>; bodies: string[] } {
  const bodies: string[] = [];
  let i = 0;
  return {
    bodies,
    base: async (req) => {
      bodies.push(await req.text());
      const [status, headers] = responses[Math.min(i++, responses.length - 1)];
      return new Response('{}', { status, headers });
    },
  };
}

describe('retries of 429 and 503', () => {
  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('sends a 503 again, body included, after Retry-After, then returns the answer', async () => {
    const { base, bodies } = answers([503, { 'retry-after': '0' }], [429, { 'retry-after': '0' }], [201]);
    const delays: number[] = [];
    const send = retryingFetch({ onRetry: ({ delayMs }) => delays.push(delayMs) }, base);
    const res = await send(new Request('http://gatehouse.test/applications', { method: 'POST', body: '{"name":"a"}' }));
    expect(res.status).toBe(201);
    expect(bodies).toEqual(['{"name":"a"}', '{"name":"a"}', '{"name":"a"}']);
    expect(delays).toEqual([0, 0]);
  });

  it('is bounded: at most `retries` more attempts, and a Retry-After beyond maxDelayMs is returned at once', async () => {
    const always = answers([503, { 'retry-after': '0' }]);
    expect((await retryingFetch({ retries: 2 }, always.base)(new Request('http://gatehouse.test/'))).status).toBe(503);
    expect(always.bodies).toHaveLength(3);

    const long = answers([429, { 'retry-after': '3600' }], [200]);
    const started = Date.now();
    expect((await retryingFetch({ maxDelayMs: 1000 }, long.base)(new Request('http://gatehouse.test/'))).status).toBe(429);
    expect(long.bodies).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('leaves other statuses alone', async () => {
    const { base, bodies } = answers([500], [200]);
    expect((await retryingFetch({}, base)(new Request('http://gatehouse.test/'))).status).toBe(500);
    expect(bodies).toHaveLength(1);
  });
});
