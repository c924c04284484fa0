import Redis from 'ioredis';
import { Bucket, RateCounter, RateDecision, retryAfterSeconds } from '@gatehouse/domain';

/**
 * The domain's GCRA (libs/domain/src/rate-limits/rate-counter.ts, `gcra`) as one Lua script, so that every replica
 * counts in the same buckets atomically: all buckets are read, and either all are taken or none. Time is Redis's
 * own (TIME), so the replicas' clocks do not matter. KEYS are the buckets; ARGV holds each bucket's limit and window
 * in seconds. Returns {allowed, retry ms, then remaining and reset seconds per bucket}.
 */
const TAKE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local allowed = 1
local retry = 0
local tats = {}
local result = {}
for i = 1, #KEYS do
  local window = tonumber(ARGV[2 * i]) * 1000
  local interval = window / tonumber(ARGV[2 * i - 1])
  local tat = tonumber(redis.call('GET', KEYS[i]))
  if tat == nil or tat < now then tat = now end
  local new_tat = tat + interval
  local allow_at = new_tat - window
  local held = new_tat
  if allow_at > now then
    allowed = 0
    if allow_at - now > retry then retry = allow_at - now end
    held = tat
  end
  result[2 * i + 1] = math.max(0, math.floor((window - (held - now)) / interval + 1e-9))
  result[2 * i + 2] = math.ceil((held - now) / 1000)
  tats[i] = new_tat
end
if allowed == 1 then
  for i = 1, #KEYS do
    redis.call('SET', KEYS[i], string.format('%.3f', tats[i]), 'PX', math.ceil(tats[i] - now))
  end
end
result[1] = allowed
result[2] = math.ceil(retry)
return result
`;

const COMMAND_TIMEOUT_MS = 500;

type TakeCommand = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

/** How often the counter could not be reached, for metrics. */
export interface RateCounterStats {
  unavailable: number;
}

/**
 * Buckets shared by every replica, in Redis under `<prefix>:ratelimit:`. When Redis cannot be reached (down, slow
 * beyond 500 ms) `take` answers null at once and callers let the request through (fail open): an outage of Redis
 * must not become an outage of every API. `onUnavailable` is told each time, for a warning.
 */
export class RedisRateCounter extends RateCounter {
  private readonly redis: Redis & { gatehouseTake: TakeCommand };
  private readonly keyPrefix: string;
  readonly stats: RateCounterStats = { unavailable: 0 };
  /** Takes asked for in this turn of the event loop, sent together in its check phase. */
  private queued: QueuedTake[] = [];
  /** Until the first connection is up, commands wait for it (briefly) rather than fail. */
  private firstConnection?: Promise<void>;

  constructor(
    url: string,
    prefix: string,
    private readonly onUnavailable: (error: unknown) => void = () => undefined,
  ) {
    super();
    this.keyPrefix = `${prefix}:ratelimit:`;
    // Not auto-pipelined (it keeps one pipeline under way and queues the rest behind it): `take` sends the takes of a
    // turn of the event loop together, and several such pipelines may be under way.
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
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

  async take(buckets: Bucket[]): Promise<RateDecision | null> {
    const keys = buckets.map((bucket) => this.keyPrefix + bucket.key);
    const limits = buckets.flatMap((bucket) => [bucket.limit.limit, bucket.limit.windowSeconds]);
    if (this.firstConnection) await this.firstConnection;
    let reply: number[];
    try {
      reply = await new Promise<number[]>((resolve, reject) => {
        if (this.queued.length === 0) setImmediate(() => this.sendQueued());
        this.queued.push({ args: [keys.length, ...keys, ...limits], resolve, reject });
      });
    } catch (error) {
      this.stats.unavailable++;
      this.onUnavailable(error);
      return null;
    }
    const allowed = reply[0] === 1;
    return {
      allowed,
      retryAfterSeconds: allowed ? 0 : retryAfterSeconds(Number(reply[1])),
      buckets: buckets.map((bucket, i) => ({ limit: bucket.limit, remaining: Number(reply[2 + 2 * i]), resetSeconds: Number(reply[3 + 2 * i]) })),
    };
  }

  /** Sends the takes asked for in this turn of the event loop as one pipeline: one write, one read of the replies. */
  private sendQueued(): void {
    const queued = this.queued;
    this.queued = [];
    const pipeline = this.redis.pipeline() as unknown as { gatehouseTake(...args: (string | number)[]): void; exec(): Promise<[Error | null, unknown][] | null> };
    for (const take of queued) pipeline.gatehouseTake(...take.args);
    pipeline.exec().then(
      (results) =>
        queued.forEach((take, i) => {
          const [error, reply] = results?.[i] ?? [new Error('no reply')];
          if (error) take.reject(error);
          else take.resolve(reply as number[]);
        }),
      (error: unknown) => queued.forEach((take) => take.reject(error)),
    );
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

interface QueuedTake {
  args: (string | number)[];
  resolve(reply: number[]): void;
  reject(error: unknown): void;
}
