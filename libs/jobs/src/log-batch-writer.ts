import { AuditEvent, IngestLogs, LogIdConflictError } from '@gatehouse/domain';

export interface LogBatchOptions {
  /** A flush starts as soon as this many rows wait. */
  maxRows: number;
  /** ...or this long after the first of them arrived. */
  maxWaitMs: number;
  /**
   * Lanes: each tenant's logs always take the same lane, so the flushes of two lanes never wait for each other's
   * chain heads.
   */
  maxParallelFlushes: number;
  /**
   * Flushes in flight at once in one lane. A second one is chained after the heads the first leads to and sent
   * while the first commits (in PostgreSQL it waits for the first's head locks), so the connection does not sit
   * idle while the worker hashes the next batch and the round trip is hidden. Default 2.
   */
  flushesPerLane?: number;
}

// A 50 ms window: under light load one transaction (one WAL flush) carries many jobs instead of one each.
export const DEFAULT_LOG_BATCH: LogBatchOptions = { maxRows: 2000, maxWaitMs: 50, maxParallelFlushes: 2, flushesPerLane: 2 };

interface Waiting {
  logs: AuditEvent[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Micro-batching for the log jobs: each job's `write` waits while jobs running alongside add theirs,
 * then one multi-row INSERT commits them all and every `write` resolves (its job completes) only after
 * that commit. BullMQ has no batch consumer; this is one built from its per-job concurrency.
 * The logs are split into lanes by tenant (see `maxParallelFlushes`); a job whose logs span lanes completes
 * when every lane has committed its part (a retry rewrites nothing: the ids are already there).
 */
export class LogBatchWriter {
  private readonly lanes: LogLane[];

  constructor(ingest: IngestLogs, options: LogBatchOptions = DEFAULT_LOG_BATCH) {
    const lanes = Math.max(1, options.maxParallelFlushes);
    const perLane = Math.max(1, options.flushesPerLane ?? 1);
    this.lanes = Array.from({ length: lanes }, () => new LogLane(ingest, { ...options, maxParallelFlushes: perLane }));
  }

  write(logs: AuditEvent[]): Promise<void> {
    if (this.lanes.length === 1) return this.lanes[0]!.write(logs);
    const byLane = new Map<number, AuditEvent[]>();
    for (const log of logs) {
      const lane = parseInt(log.tenantId.slice(0, 8), 16) % this.lanes.length;
      const list = byLane.get(lane);
      if (list) list.push(log);
      else byLane.set(lane, [log]);
    }
    return Promise.all([...byLane].map(([lane, part]) => this.lanes[lane]!.write(part))).then(() => undefined);
  }

  /** Commits whatever waits and resolves when every flush has finished (shutdown). */
  async close(): Promise<void> {
    await Promise.all(this.lanes.map((lane) => lane.close()));
  }
}

/** One lane of the writer: the batching itself. */
class LogLane {
  private waiting: Waiting[] = [];
  private waitingRows = 0;
  private timer?: NodeJS.Timeout;
  /** The window ran out while every flush slot was busy: flush as soon as one frees. */
  private overdue = false;
  private readonly flushes = new Set<Promise<void>>();

  constructor(
    private readonly ingest: IngestLogs,
    private readonly options: LogBatchOptions = DEFAULT_LOG_BATCH,
  ) {}

  write(logs: AuditEvent[]): Promise<void> {
    if (logs.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ logs, resolve, reject });
      this.waitingRows += logs.length;
      if (this.waitingRows >= this.options.maxRows) this.drain(false);
      else this.arm();
    });
  }

  /** Commits whatever waits and resolves when every flush has finished (shutdown). */
  async close(): Promise<void> {
    while (this.waiting.length > 0 || this.flushes.size > 0) {
      this.drain(true);
      await Promise.race(this.flushes);
    }
  }

  private arm(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.drain(true);
    }, this.options.maxWaitMs);
  }

  private drain(force: boolean): void {
    if (force) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.waiting.length > 0 && this.flushes.size < this.options.maxParallelFlushes && (force || this.waitingRows >= this.options.maxRows)) {
      const batch: Waiting[] = [];
      let rows = 0;
      while (this.waiting.length > 0 && rows < this.options.maxRows) {
        const next = this.waiting.shift()!;
        batch.push(next);
        rows += next.logs.length;
      }
      this.waitingRows -= rows;
      const flush: Promise<void> = this.flush(batch).finally(() => {
        this.flushes.delete(flush);
        const overdue = this.overdue;
        this.overdue = false;
        if (overdue || this.waitingRows >= this.options.maxRows) this.drain(overdue);
        else if (this.waiting.length > 0) this.arm();
      });
      this.flushes.add(flush);
    }
    if (force && this.waiting.length > 0) this.overdue = true;
    else if (this.waiting.length > 0) this.arm();
  }

  private async flush(batch: Waiting[]): Promise<void> {
    try {
      await this.ingest.execute(batch.flatMap((w) => w.logs));
      for (const w of batch) w.resolve();
    } catch (error) {
      if (error instanceof LogIdConflictError) return settleConflicts(batch, error);
      if (batch.length === 1) return batch[0]!.reject(error);
      // One job's rows may be what failed: retry each alone so the others still commit.
      for (const w of batch) {
        await this.ingest.execute(w.logs).then(w.resolve, w.reject);
      }
    }
  }
}

/** Every log but the conflicting ones was written: only the writes holding one of those fail, naming theirs. */
function settleConflicts(batch: Waiting[], error: LogIdConflictError): void {
  const conflicting = new Set(error.conflicts.map((c) => `${c.tenantId}/${c.id}`));
  for (const w of batch) {
    const own = w.logs.filter((l) => conflicting.has(`${l.tenantId}/${l.id}`));
    if (own.length === 0) w.resolve();
    else w.reject(new LogIdConflictError(own.map((l) => ({ id: l.id, tenantId: l.tenantId }))));
  }
}
