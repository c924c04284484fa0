import { KeyObject } from 'node:crypto';
import { Principal } from '../applications/principal';
import { Clock } from '../shared/clock';
import { Page, PageQuery } from '../shared/page';
import { ChainVerification, ChainVerifier, CheckpointSigner, checkpointMessage, LogCheckpoint } from './log-chain';
import { LogRepository } from './log.repository';

/**
 * The worker's periodic signing: every chain that grew since its last checkpoint gets one over its current
 * head. Several workers may run it at once; a checkpoint already stored at the same position is kept.
 */
export class SignLogCheckpoints {
  constructor(
    private readonly logs: LogRepository,
    private readonly signer: CheckpointSigner,
    private readonly clock: Clock,
  ) {}

  async execute(batchSize = 500): Promise<number> {
    let signed = 0;
    for (;;) {
      const heads = await this.logs.headsToCheckpoint(batchSize);
      if (heads.length === 0) return signed;
      const signedAt = this.clock.now();
      const checkpoints: LogCheckpoint[] = heads.map((head) => {
        const unsigned = { tenantId: head.tenantId, position: head.position, hash: head.hash, signedAt };
        return { ...unsigned, keyId: this.signer.keyId, signature: this.signer.sign(checkpointMessage(unsigned)) };
      });
      signed += await this.logs.saveCheckpoints(checkpoints);
      if (heads.length < batchSize) return signed;
    }
  }
}

/** `GET /logs/checkpoints`: the caller's tenant's checkpoints, newest first. */
export class ListLogCheckpoints {
  constructor(private readonly logs: LogRepository) {}

  execute(principal: Principal, page: PageQuery): Promise<Page<LogCheckpoint>> {
    return this.logs.listCheckpoints(principal.tenantId, page);
  }
}

/**
 * Verifies a tenant's whole chain against the database (`gatehouse logs verify --tenant`): streamed in slices,
 * each slice's checkpoints handed to the verifier before its logs, so memory stays constant at any size.
 */
export class VerifyLogChain {
  constructor(private readonly logs: LogRepository) {}

  async execute(tenantId: string, publicKey: KeyObject, onProgress?: (verified: number, total: number) => void, sliceSize = 5000): Promise<ChainVerification> {
    const verifier = new ChainVerifier(tenantId, publicKey);
    const head = await this.logs.chainHead(tenantId);
    // Up to the head read now (what is appended meanwhile is for the next verification), or to the newest
    // checkpoint if that is further: a checkpoint is only ever signed over logs that committed.
    const [newest] = (await this.logs.listCheckpoints(tenantId, { page: 1, size: 1 })).items;
    const end = Math.max(head.position, newest?.position ?? 0);
    let after = 0;
    for (;;) {
      const slice = await this.logs.chainSlice(tenantId, {}, after, end, sliceSize);
      const upTo = slice.length < sliceSize ? end : slice[slice.length - 1]!.position;
      for (let from = after; ; ) {
        const checkpoints = await this.logs.checkpointSlice(tenantId, from, upTo, sliceSize);
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
