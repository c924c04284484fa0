import { Clock } from '../shared/clock';
import { Log } from './log';
import { LogRepository } from './log.repository';

/**
 * The safety net of the outbox: events still in `audit_outbox` a while after their commit (the process
 * died before publishing, Redis was down, the queue lost them) are moved into the logs directly.
 */
export class RelayAuditOutbox {
  constructor(
    private readonly logs: LogRepository,
    private readonly clock: Clock,
  ) {}

  /** Relays every event recorded more than `minAgeMs` ago, in batches; returns how many it wrote. */
  async execute(minAgeMs: number, batchSize = 1000): Promise<number> {
    let moved = 0;
    for (;;) {
      const recordedBefore = new Date(this.clock.now().getTime() - minAgeMs);
      const n = await this.logs.relayOutbox(recordedBefore, batchSize);
      moved += n;
      if (n < batchSize) return moved;
    }
  }
}

/** Writes validated logs; idempotent by log id (see LogRepository.append). */
export class IngestLogs {
  constructor(private readonly logs: LogRepository) {}

  execute(logs: Log[]): Promise<number> {
    return logs.length === 0 ? Promise.resolve(0) : this.logs.append(logs);
  }
}
