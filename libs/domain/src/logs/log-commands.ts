import { actorOf } from '../audit/actor';
import { Principal } from '../applications/principal';
import { Clock } from '../shared/clock';
import { UnitOfWork } from '../shared/unit-of-work';
import { AuditEvent, Log } from './log';
import { LogChainWriter } from './log-chain-writer';
import { LogCheckpointRepository } from './log-checkpoint.repository';
import { CheckpointSigner, checkpointMessage, LogCheckpoint } from './log-signing';
import { LogFilter, LogRepository } from './log.repository';
import { validateLogFilter } from './log-queries';

/**
 * The safety net of the outbox: events still in `audit_outbox` a while after their commit (the process
 * died before publishing, Redis was down, the queue lost them) are moved into the logs directly.
 */
export class RelayAuditOutbox {
  constructor(
    private readonly writer: LogChainWriter,
    private readonly clock: Clock,
  ) {}

  /** Relays every event recorded more than `minAgeMs` ago, in batches; returns how many it wrote. */
  async execute(minAgeMs: number, batchSize = 1000): Promise<number> {
    let moved = 0;
    for (;;) {
      const recordedBefore = new Date(this.clock.now().getTime() - minAgeMs);
      const n = await this.writer.relayOutbox(recordedBefore, batchSize);
      moved += n;
      if (n < batchSize) return moved;
    }
  }
}

/** Writes validated logs; idempotent by log id (see LogChainWriter.append). */
export class IngestLogs {
  constructor(private readonly writer: LogChainWriter) {}

  execute(logs: AuditEvent[]): Promise<number> {
    return logs.length === 0 ? Promise.resolve(0) : this.writer.append(logs);
  }
}

/**
 * The worker's periodic signing: every chain that grew since its last checkpoint gets one over its current
 * head. Several workers may run it at once; a checkpoint already stored at the same position is kept.
 */
export class SignLogCheckpoints {
  constructor(
    private readonly checkpoints: LogCheckpointRepository,
    private readonly signer: CheckpointSigner,
    private readonly clock: Clock,
  ) {}

  async execute(batchSize = 500): Promise<number> {
    let signed = 0;
    for (;;) {
      const heads = await this.checkpoints.headsToCheckpoint(batchSize);
      if (heads.length === 0) return signed;
      const signedAt = this.clock.now();
      const checkpoints: LogCheckpoint[] = heads.map((head) => {
        const unsigned = { tenantId: head.tenantId, position: head.position, hash: head.hash, signedAt };
        return { ...unsigned, keyId: this.signer.keyId, signature: this.signer.sign(checkpointMessage(unsigned)) };
      });
      signed += await this.checkpoints.saveCheckpoints(checkpoints);
      if (heads.length < batchSize) return signed;
    }
  }
}

export type LogExportFormat = 'ndjson' | 'csv';

export interface LogExport {
  /** The chain head when the export began: the export holds the matching logs up to it, and no further. */
  upToPosition: number;
  /** The matching logs in position order, a slice at a time; stop iterating to stop reading the database. */
  slices: AsyncIterable<Log[]>;
}

/**
 * `GET /logs/export`: every log of the caller's tenant that matches, in chain order, read a slice at a time by
 * position (keyset), so that memory stays flat and nothing holds a transaction open for the length of the
 * download. The export is itself audited (operation `read`), through the outbox like every other change.
 */
export class ExportLogs {
  constructor(
    private readonly logs: LogRepository,
    private readonly uow: UnitOfWork,
  ) {}

  async execute(principal: Principal, filter: LogFilter, format: LogExportFormat, sliceSize = 1000): Promise<LogExport> {
    validateLogFilter(filter);
    const tenantId = principal.tenantId;
    await this.uow.run(async (tx) =>
      tx.record({
        tenantId,
        actor: actorOf(principal),
        entityType: 'tenant',
        entityId: tenantId,
        operation: 'read',
        message: `Audit logs exported (${format}${describeFilter(filter)})`,
      }),
    );
    const upToPosition = (await this.logs.chainHead(tenantId)).position;
    const logs = this.logs;
    async function* slices(): AsyncGenerator<Log[]> {
      let after = 0;
      while (after < upToPosition) {
        const slice = await logs.chainSlice(tenantId, filter, after, upToPosition, sliceSize);
        if (slice.length === 0) return;
        yield slice;
        after = slice[slice.length - 1]!.position;
      }
    }
    return { upToPosition, slices: slices() };
  }
}

function describeFilter(filter: LogFilter): string {
  const parts = [
    filter.entityType === undefined ? undefined : `entity_type=${filter.entityType}`,
    filter.entityId === undefined ? undefined : `entity_id=${filter.entityId}`,
    filter.actorId === undefined ? undefined : `actor_id=${filter.actorId}`,
    filter.requestId === undefined ? undefined : `request_id=${filter.requestId}`,
    filter.startDate === undefined ? undefined : `start_date=${filter.startDate.toISOString()}`,
    filter.endDate === undefined ? undefined : `end_date=${filter.endDate.toISOString()}`,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? '' : `; ${parts.join(', ')}`;
}
