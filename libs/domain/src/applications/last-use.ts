import { Clock } from '../shared/clock';

/** One application's last use, to the minute. */
export interface ApplicationUse {
  applicationId: string;
  at: Date;
}

/** Where last uses are written: outside any transaction and audit trail (a use is not a change), never backwards. */
export abstract class LastUseStore {
  abstract recordLastUse(uses: ApplicationUse[]): Promise<void>;
}

const MINUTE_MS = 60_000;
const MAX_PENDING = 100_000;

/**
 * `last_used_at` without touching the request's path: `touch` is a map lookup in memory, and `flush` (run by a timer,
 * and at shutdown) writes what was touched since, in one statement. An application is written at most once a
 * minute by each process: a touch within the minute already recorded is dropped.
 */
export class LastUseRecorder {
  /** Application id -> the minute (epoch ms) last handed to the store or waiting for it. */
  private readonly recorded = new Map<string, number>();
  private pending = new Map<string, number>();

  constructor(
    private readonly store: LastUseStore,
    private readonly clock: Clock,
  ) {}

  touch(applicationId: string): void {
    const minute = Math.floor(this.clock.now().getTime() / MINUTE_MS) * MINUTE_MS;
    if (this.recorded.get(applicationId) === minute) return;
    if (this.pending.size >= MAX_PENDING) return;
    this.recorded.set(applicationId, minute);
    this.pending.set(applicationId, minute);
  }

  /** Writes what was touched since the last flush; a failed write is retried at the next flush. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.store.recordLastUse([...batch].map(([applicationId, minute]) => ({ applicationId, at: new Date(minute) })));
    } catch (error) {
      for (const [id, minute] of batch) if (!this.pending.has(id)) this.pending.set(id, minute);
      throw error;
    }
    // Forget minutes long past, so the map holds only applications used lately.
    const stale = this.clock.now().getTime() - 2 * MINUTE_MS;
    for (const [id, minute] of this.recorded) if (minute < stale) this.recorded.delete(id);
  }
}
