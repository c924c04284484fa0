import { Principal } from '../applications/principal';
import { FieldErrorCollector } from '../shared/domain-error';
import { Page, PageQuery } from '../shared/page';
import { KeyObject } from 'node:crypto';
import { ChainVerification, ChainVerifier } from './chain-verifier';
import { isEntityType, Log, MAX_ENTITY_ID_LENGTH } from './log';
import { LogCheckpointRepository } from './log-checkpoint.repository';
import { LogRetentionRepository } from './log-retention';
import { LogCheckpoint } from './log-signing';
import { LogFilter, LogRepository } from './log.repository';

/** `GET /logs`: the caller's tenant only, newest first, filtered (spec 4.1, CONTRACT.md sections 1 and 8). */
export class ListLogs {
  constructor(private readonly logs: LogRepository) {}

  async execute(principal: Principal, filter: LogFilter, page: PageQuery): Promise<Page<Log>> {
    validateLogFilter(filter);
    return this.logs.list(principal.tenantId, filter, page);
  }
}

/** The rules of a log filter, shared by the list and the export; a ValidationError names every bad field. */
export function validateLogFilter(filter: LogFilter): void {
  const errors = new FieldErrorCollector();
  if (filter.entityType !== undefined && !isEntityType(filter.entityType)) {
    errors.add('entity_type', 'must be one of the values of GET /logs/entity-types');
  }
  if (filter.entityId !== undefined && (filter.entityId.length === 0 || filter.entityId.length > MAX_ENTITY_ID_LENGTH)) {
    errors.add('entity_id', `must be 1 to ${MAX_ENTITY_ID_LENGTH} characters`);
  }
  for (const [field, date] of [
    ['start_date', filter.startDate],
    ['end_date', filter.endDate],
  ] as const) {
    if (date !== undefined && Number.isNaN(date.getTime())) errors.add(field, 'must be an ISO 8601 date-time');
  }
  if (filter.startDate && filter.endDate && filter.endDate.getTime() <= filter.startDate.getTime()) {
    errors.add('end_date', 'must be later than start_date');
  }
  errors.throwIfAny();
}

/** `GET /logs/checkpoints`: the caller's tenant's checkpoints, newest first. */
export class ListLogCheckpoints {
  constructor(private readonly checkpoints: LogCheckpointRepository) {}

  execute(principal: Principal, page: PageQuery): Promise<Page<LogCheckpoint>> {
    return this.checkpoints.listCheckpoints(principal.tenantId, page);
  }
}

/**
 * Verifies a tenant's whole chain against the database (`gatehouse logs verify --tenant`): streamed in slices,
 * each slice's checkpoints handed to the verifier before its logs, so memory stays constant at any size.
 */
export class VerifyLogChain {
  constructor(
    private readonly logs: LogRepository,
    private readonly checkpoints: LogCheckpointRepository,
    /** Where retention removed the oldest logs: the chain is verified from the newest anchor. */
    private readonly retention?: LogRetentionRepository,
  ) {}

  /** `publicKeys`: the current key and the retired ones (checkpoints and anchors name theirs). */
  async execute(
    tenantId: string,
    publicKeys: KeyObject | readonly KeyObject[],
    onProgress?: (verified: number, total: number) => void,
    sliceSize = 5000,
  ): Promise<ChainVerification> {
    // Retention may remove the oldest logs while this reads them: a failure found while the anchor moved is run again
    // from the new anchor (a removal outside retention moves no anchor, so it is still reported).
    for (let attempt = 1; ; attempt++) {
      const anchor = await this.retention?.newestAnchor(tenantId);
      const result = await this.verifyFrom(tenantId, publicKeys, anchor ?? undefined, onProgress, sliceSize);
      if (result.valid || attempt === 3) return result;
      const now = await this.retention?.newestAnchor(tenantId);
      if ((now?.position ?? 0) === (anchor?.position ?? 0)) return result;
    }
  }

  private async verifyFrom(
    tenantId: string,
    publicKeys: KeyObject | readonly KeyObject[],
    anchor: Awaited<ReturnType<LogRetentionRepository['newestAnchor']>> | undefined,
    onProgress: ((verified: number, total: number) => void) | undefined,
    sliceSize: number,
  ): Promise<ChainVerification> {
    const verifier = new ChainVerifier(tenantId, publicKeys, anchor);
    // The highest stored position first, then the head: a writer moves the head in the transaction that adds its
    // logs, so an honest head is never behind logs read before it. Up to the furthest of the head, those logs and
    // the newest checkpoint (only ever signed over committed logs); what is appended meanwhile is for next time.
    const highest = await this.logs.highestPosition(tenantId);
    const head = await this.logs.chainHead(tenantId);
    const [newest] = (await this.checkpoints.listCheckpoints(tenantId, { page: 1, size: 1 })).items;
    const end = Math.max(head.position, highest, newest?.position ?? 0);
    let after = anchor?.position ?? 0;
    for (;;) {
      const slice = await this.logs.chainSlice(tenantId, {}, after, end, sliceSize);
      const upTo = slice.length < sliceSize ? end : slice[slice.length - 1]!.position;
      for (let from = after; ;) {
        const checkpoints = await this.checkpoints.checkpointSlice(tenantId, from, upTo, sliceSize);
        verifier.addCheckpoints(checkpoints);
        if (checkpoints.length < sliceSize) break;
        from = checkpoints[checkpoints.length - 1]!.position;
      }
      for (const log of slice) if (!verifier.add(log)) return verifier.finish();
      onProgress?.(slice.length === 0 ? head.position : slice[slice.length - 1]!.position, head.position);
      if (slice.length < sliceSize) break;
      after = upTo;
    }
    const result = verifier.finish();
    if (!result.firstInvalidLog && head.position < highest) {
      return {
        ...result,
        valid: false,
        firstInvalidLog: {
          position: head.position + 1,
          reason: `the recorded head is position ${head.position} but logs up to position ${highest} are stored: the head was rolled back or removed`,
        },
      };
    }
    const behind = result.head.position < head.position || (result.head.position === head.position && result.head.hash !== head.hash);
    if (!result.firstInvalidLog && behind) {
      return {
        ...result,
        valid: false,
        firstInvalidLog: {
          position: Math.min(result.head.position, head.position) + 1,
          reason: `the chain ends at position ${result.head.position} but the recorded head is position ${head.position}: logs were removed from the end or the head altered`,
        },
      };
    }
    return result;
  }
}
