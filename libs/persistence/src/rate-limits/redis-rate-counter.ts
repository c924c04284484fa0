import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { Bucket, BucketState, RateCounter, RateDecision, RateLimit, retryAfterSeconds } from '@gatehouse/domain';

/**
 * The domain's GCRA (libs/domain/src/rate-limits/rate-counter.ts, `gcra`) as one Lua script, so that every replica
 * counts in the same buckets atomically: all buckets are read, and either all are taken or none. Time is Redis's
 * own (TIME), so the replicas' clocks do not matter. KEYS are the buckets; ARGV holds four numbers per bucket: its
 * limit, its window in seconds, the cells asked for and a lease in ms.
 *
 * One cell is one request. Asked for one cell (lease 0), a bucket gives it when GCRA allows a request now. Asked for
 * more (a lease: see RedisRateCounter), it gives them all, placed in the bucket's schedule no earlier than
 * `now + lease`, when GCRA allows that; else one cell as above. The request is allowed when every bucket gives at
 * least one. Returns {allowed, retry ms, then per bucket: cells given (0 when refused), remaining, reset seconds}.
 */
const TAKE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local allowed = 1
local retry = 0
local starts = {}
local held = {}
local given = {}
local windows = {}
local intervals = {}
for i = 1, #KEYS do
  local window = tonumber(ARGV[4 * i - 2]) * 1000
  local interval = window / tonumber(ARGV[4 * i - 3])
  local cells = tonumber(ARGV[4 * i - 1])
  local lease = tonumber(ARGV[4 * i])
  -- A bucket holds "<tat> <interval>": a TAT counted under another limit is carried over (carriedTat in the domain).
  local raw = redis.call('GET', KEYS[i])
  local tat = nil
  if raw then
    local stored_tat, stored_interval = string.match(raw, '^(%S+) (%S+)$')
    tat = tonumber(stored_tat or raw)
    stored_interval = tonumber(stored_interval)
    if tat and stored_interval and tat > now and math.abs(stored_interval - interval) >= 1e-6 then
      tat = now + math.min((tat - now) / stored_interval * interval, window)
    end
  end
  if tat == nil or tat < now then tat = now end
  windows[i] = window
  intervals[i] = interval
  given[i] = 0
  starts[i] = tat
  held[i] = tat
  if cells > 1 then
    local base = math.max(tat, now + lease)
    if base + cells * interval - window <= now then
      given[i] = cells
      held[i] = base + cells * interval
    end
  end
  if given[i] == 0 then
    local allow_at = tat + interval - window
    if allow_at > now then
      allowed = 0
      if allow_at - now > retry then retry = allow_at - now end
    else
      given[i] = 1
      held[i] = tat + interval
    end
  end
end
local result = {allowed, math.ceil(retry)}
for i = 1, #KEYS do
  if allowed == 1 then
    redis.call('SET', KEYS[i], string.format('%.3f %.17g', held[i], intervals[i]), 'PX', math.ceil(held[i] - now))
  else
    -- Nothing is taken; a bucket that would have given a plain cell says what it would hold after it (as in memory).
    if given[i] > 1 then held[i] = starts[i] + intervals[i] end
    given[i] = 0
  end
  result[3 * i] = given[i]
  result[3 * i + 1] = math.max(0, math.floor((windows[i] - (held[i] - now)) / intervals[i] + 1e-9))
  result[3 * i + 2] = math.ceil((held[i] - now) / 1000)
end
return result
`;

const COMMAND_TIMEOUT_MS = 500;
/** The longest a lease lasts. */
export const MAX_LEASE_MS = 100;
/** The period over which a bucket's demand (its takes in this process) is counted, to size its next lease. */
const DEMAND_PERIOD_MS = 20;
/** A lease holds at most this share of a limit, and lasts at most this share of its window (see leaseTerms). */
const LEASE_SHARE = 100;
const MAX_LEASED_BUCKETS = 10_000;

type TakeCommand = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

/** How often the counter could not be reached, for metrics; and how requests were counted. */
export interface RateCounterStats {
  unavailable: number;
  /** Scripts run in Redis (each counts one request, and may lease cells for more). */
  scripts: number;
  /** Requests counted from a lease, in this process, without a round trip. */
  leased: number;
  /** Pipelines Redis had not answered 500 ms after they were sent (their requests failed open). */
  timedOut: number;
}

/** What to ask a bucket for: `cells` (1: a plain count) placed no earlier than `leaseMs` from now. */
export interface LeaseTerms {
  cells: number;
  leaseMs: number;
}

const PLAIN: LeaseTerms = Object.freeze({ cells: 1, leaseMs: 0 });

/**
 * The lease a bucket may get, given `demand`, the requests this process counted for it over the last 20 ms: it lasts
 * 1/100 of the window, at most 100 ms, and holds what that demand would spend in half of it (so it runs out before it
 * ends, a round trip and some slack included, rather than end with cells unspent), at most 1/100 of the limit. With a
 * demand below two, or room for fewer than two cells, none: a plain count. So a limit below 200 is never leased, and
 * a lease ties up at most 2/100 of a limit: its cells, and the stretch of schedule it skips (its length, L·N/W cells).
 */
export function leaseTerms(limit: RateLimit, demand: number): LeaseTerms {
  if (demand < 2) return PLAIN;
  const leaseMs = Math.min(MAX_LEASE_MS, (limit.windowSeconds * 1000) / LEASE_SHARE);
  const cells = Math.min(Math.ceil((demand * leaseMs) / 2 / DEMAND_PERIOD_MS), Math.floor(limit.limit / LEASE_SHARE));
  return cells >= 2 ? { cells, leaseMs } : PLAIN;
}

/** The cells a process holds for one bucket, and what it knows of the bucket's demand. */
interface Lease {
  /** Cells not yet spent; each counts one request. */
  cells: number;
  /** performance.now() before which they may be spent (the lease's end); after it they are lost. */
  until: number;
  /** The bucket's state when they were given (remaining excludes them), for the RateLimit fields. */
  remaining: number;
  resetSeconds: number;
  /** A lease asked for and not answered yet: takes of the bucket wait for it rather than ask for their own. */
  asked?: Promise<void>;
  /** No lease is asked for before then (the last one was refused or failed: near the limit, or Redis away). */
  plainUntil: number;
  /** Takes of the bucket in the current demand period, and in the one before. */
  periodStart: number;
  takes: number;
  previousTakes: number;
}

/**
 * Buckets shared by every replica, in Redis under `<prefix>:ratelimit:`. When Redis cannot be reached (down, slow
 * beyond 500 ms) `take` answers null at once and callers let the request through (fail open): an outage of Redis
 * must not become an outage of every API. `onUnavailable` is told each time, for a warning.
 *
 * **Leases.** A busy bucket is not counted in Redis request by request: a process that counted many requests for it
 * lately asks the script for a block of cells (leaseTerms) and spends them locally, one per request, until they run
 * out or the lease ends, whichever comes first; then it asks again. Near the limit the script cannot give the block
 * and counts the request alone, and the process counts plainly for a while; so does a limit too small to lease.
 *
 * Why no replica, nor all of them together, ever admits more than GCRA allows (a burst of N, then one request per W/N):
 * every cell, leased or not, is one step of the bucket's schedule in Redis (its theoretical arrival times: cell m of
 * the bucket occupies [TAT(m-1), TAT(m)), TAT(m) = TAT(m-1) + W/N), given only when GCRA allowed it by then
 * (TAT(m) - W <= the script's now). A plain cell is spent at once; a leased cell is spent before the lease ends,
 * `lease` ms after the script ran, and the script placed the lease's cells no earlier than that (TAT(m-1) >= now +
 * lease). So every cell is spent between the moment GCRA allowed it and the start of its own step, TAT(m-1) - (W -
 * W/N) <= spent <= TAT(m-1), and no two cells share a step. The cells spent within any stretch [x, x + Δ] then have
 * TAT(m-1) within [x, x + Δ + W - W/N], steps at least W/N apart: at most floor((Δ + W - W/N) / (W/N)) + 1 of them,
 * which is GCRA's own bound. (The lease's end is measured from when the script was sent, which is before it ran.)
 *
 * What leases cost: a lease skips the schedule up to its end, and its unspent cells are lost when it ends (counted as
 * used, never served), each at most 1/100 of the limit; the RateLimit fields of a request counted from a lease say what
 * the bucket held when the lease was given (at most 100 ms before) plus the cells this process still holds.
 */
export class RedisRateCounter extends RateCounter {
  private readonly redis: Redis & { gatehouseTake: TakeCommand };
  private readonly keyPrefix: string;
  readonly stats: RateCounterStats = { unavailable: 0, scripts: 0, leased: 0, timedOut: 0 };
  /** Takes asked for in this turn of the event loop, sent together in its check phase. */
  private queued: QueuedTake[] = [];
  /** Until the first connection is up, commands wait for it (briefly) rather than fail. */
  private firstConnection?: Promise<void>;
  /** Per bucket key, of the buckets whose limit may be leased. */
  private readonly leases = new Map<string, Lease>();

  constructor(
    url: string,
    prefix: string,
    private readonly onUnavailable: (error: unknown) => void = () => undefined,
  ) {
    super();
    this.keyPrefix = `${prefix}:ratelimit:`;
    // Not auto-pipelined (it keeps one pipeline under way and queues the rest behind it): `take` sends the takes of a
    // turn of the event loop together, and several such pipelines may be under way.
    // No ioredis commandTimeout: its timer fires in the timers phase, before the poll phase reads a reply that came
    // back while the event loop was blocked, so a slow event loop became fail-open. sendQueued times out instead.
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    redis.on('error', () => undefined);
    redis.defineCommand('gatehouseTake', { lua: TAKE });
    this.redis = redis as Redis & { gatehouseTake: TakeCommand };
    this.firstConnection = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, COMMAND_TIMEOUT_MS);
      timer.unref();
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    }).then(() => (this.firstConnection = undefined));
  }

  /** At once when every bucket has a leased cell; else a promise of Redis's answer. */
  take(buckets: readonly Bucket[]): RateDecision | null | Promise<RateDecision | null> {
    const now = performance.now();
    const leases = buckets.map((bucket) => this.leaseOf(bucket, now));
    return this.fromLeases(buckets, leases, now) ?? this.takeFromRedis(buckets, leases);
  }

  private fromLeases(buckets: readonly Bucket[], leases: (Lease | undefined)[], now: number): RateDecision | undefined {
    const local = spend(buckets, leases, now);
    if (local) this.stats.leased++;
    return local;
  }

  private async takeFromRedis(buckets: readonly Bucket[], leases: (Lease | undefined)[]): Promise<RateDecision | null> {
    for (;;) {
      // A lease of one of these buckets is on its way: its cells may serve this request too.
      const asked = leases.find((lease) => lease?.asked)?.asked;
      if (!asked) return this.count(buckets, leases, performance.now());
      await asked;
      const local = this.fromLeases(buckets, leases, performance.now());
      if (local) return local;
    }
  }

  /** The lease state of a bucket that may be leased (noting this take in its demand); undefined for one that may not. */
  private leaseOf(bucket: Bucket, now: number): Lease | undefined {
    if (bucket.limit.limit < 2 * LEASE_SHARE) return undefined;
    // Per policy too: cells leased under a limit that has changed since are not spent under the new one.
    const name = `${bucket.key} ${bucket.limit.limit}/${bucket.limit.windowSeconds}`;
    let lease = this.leases.get(name);
    if (!lease) {
      if (this.leases.size >= MAX_LEASED_BUCKETS) this.forgetIdle(now);
      lease = { cells: 0, until: 0, remaining: 0, resetSeconds: 0, plainUntil: 0, periodStart: now, takes: 0, previousTakes: 0 };
      this.leases.set(name, lease);
    }
    if (now - lease.periodStart >= DEMAND_PERIOD_MS) {
      lease.previousTakes = now - lease.periodStart < 2 * DEMAND_PERIOD_MS ? lease.takes : 0;
      lease.takes = 0;
      lease.periodStart = now;
    }
    lease.takes++;
    return lease;
  }

  /** Counts the request in Redis, asking for a lease for each leasable bucket that has none and some demand. */
  private async count(buckets: readonly Bucket[], leases: (Lease | undefined)[], now: number): Promise<RateDecision | null> {
    const terms = buckets.map((bucket, i) => {
      const lease = leases[i];
      // A bucket with live cells (another bucket of the request has none) is counted plainly: its lease stays.
      if (!lease || lease.plainUntil > now || (lease.cells > 0 && lease.until > now)) return PLAIN;
      return leaseTerms(bucket.limit, Math.max(lease.takes, lease.previousTakes));
    });
    const keys = buckets.map((bucket) => this.keyPrefix + bucket.key);
    const args = buckets.flatMap((bucket, i) => [bucket.limit.limit, bucket.limit.windowSeconds, terms[i]!.cells, terms[i]!.leaseMs]);
    let answered!: () => void;
    const asking = new Promise<void>((resolve) => (answered = resolve));
    terms.forEach((term, i) => {
      if (term.cells > 1) leases[i]!.asked = asking;
    });
    try {
      if (this.firstConnection) await this.firstConnection;
      let reply: number[];
      let sentAt: number;
      try {
        [reply, sentAt] = await new Promise<[number[], number]>((resolve, reject) => {
          if (this.queued.length === 0) setImmediate(() => this.sendQueued());
          this.queued.push({ args: [keys.length, ...keys, ...args], resolve, reject });
        });
      } catch (error) {
        this.stats.unavailable++;
        this.onUnavailable(error);
        this.countPlainly(terms, leases, performance.now());
        return null;
      }
      const allowed = reply[0] === 1;
      const states: BucketState[] = buckets.map((bucket, i) => {
        const given = Number(reply[2 + 3 * i]);
        const remaining = Number(reply[3 + 3 * i]);
        const resetSeconds = Number(reply[4 + 3 * i]);
        const lease = leases[i];
        if (lease && terms[i]!.cells > 1) {
          if (given > 1) {
            // This request spends one; the rest are the lease, spent before the script's now + leaseMs.
            lease.cells = given - 1;
            lease.until = sentAt + terms[i]!.leaseMs;
            lease.remaining = remaining;
            lease.resetSeconds = resetSeconds;
          } else {
            lease.plainUntil = performance.now() + terms[i]!.leaseMs;
          }
        }
        return { limit: bucket.limit, remaining: Math.min(bucket.limit.limit, remaining + (lease && given > 1 ? lease.cells : 0)), resetSeconds };
      });
      return { allowed, retryAfterSeconds: allowed ? 0 : retryAfterSeconds(Number(reply[1])), buckets: states };
    } finally {
      terms.forEach((term, i) => {
        if (leases[i]?.asked === asking) leases[i]!.asked = undefined;
      });
      answered();
    }
  }

  /** After a failed count: no lease is asked for a while, so waiting takes fail (open) at once rather than in turn. */
  private countPlainly(terms: LeaseTerms[], leases: (Lease | undefined)[], now: number): void {
    terms.forEach((term, i) => {
      if (term.cells > 1) leases[i]!.plainUntil = now + term.leaseMs;
    });
  }

  /** Sends the takes asked for in this turn of the event loop as one pipeline: one write, one read of the replies. */
  private sendQueued(): void {
    const queued = this.queued;
    this.queued = [];
    const pipeline = this.redis.pipeline() as unknown as {
      gatehouseTake(...args: (string | number)[]): void;
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    for (const take of queued) pipeline.gatehouseTake(...take.args);
    this.stats.scripts += queued.length;
    const sentAt = performance.now();
    let settled = false;
    const timer = setTimeout(() => {
      // 500 ms after the pipeline was written, by the clock, not by how long the event loop took to get here. When
      // it was blocked, the reply may be waiting in the socket: the poll phase of this very turn reads it, before the
      // check phase (setImmediate) decides. A count that came back is honoured; only one that did not fails open.
      setImmediate(() => {
        if (settled) return;
        settled = true;
        this.stats.timedOut++;
        const error = new Error(`Redis did not answer within ${COMMAND_TIMEOUT_MS} ms`);
        queued.forEach((take) => take.reject(error));
      });
    }, COMMAND_TIMEOUT_MS);
    const settle = (answer: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      answer();
    };
    pipeline.exec().then(
      (results) =>
        settle(() =>
          queued.forEach((take, i) => {
            const [error, reply] = results?.[i] ?? [new Error('no reply')];
            if (error) take.reject(error);
            else take.resolve([reply as number[], sentAt]);
          }),
        ),
      (error: unknown) => settle(() => queued.forEach((take) => take.reject(error))),
    );
  }

  /** Keeps the map of leased buckets bounded: buckets without cells or a pending lease go first. */
  private forgetIdle(now: number): void {
    for (const [key, lease] of this.leases) {
      if (!lease.asked && (lease.cells === 0 || lease.until <= now)) this.leases.delete(key);
    }
    for (const key of this.leases.keys()) {
      if (this.leases.size < MAX_LEASED_BUCKETS) break;
      if (!this.leases.get(key)!.asked) this.leases.delete(key);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

/** Spends one leased cell of every bucket, when each has one (before its lease ends); else spends nothing. */
function spend(buckets: readonly Bucket[], leases: (Lease | undefined)[], now: number): RateDecision | undefined {
  for (const lease of leases) if (!lease || lease.cells === 0 || lease.until <= now) return undefined;
  return {
    allowed: true,
    retryAfterSeconds: 0,
    buckets: buckets.map((bucket, i) => {
      const lease = leases[i]!;
      lease.cells--;
      return { limit: bucket.limit, remaining: Math.min(bucket.limit.limit, lease.remaining + lease.cells), resetSeconds: lease.resetSeconds };
    }),
  };
}

interface QueuedTake {
  args: (string | number)[];
  resolve(answer: [number[], number]): void;
  reject(error: unknown): void;
}
