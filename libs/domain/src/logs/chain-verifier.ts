import { KeyObject } from 'node:crypto';
import { Log } from './log';
import { chainHash, GENESIS_HASH } from './log-hash';
import { checkpointSignatureValid, LogCheckpoint } from './log-signing';
import { PublicKeySet } from './public-keys';
import { RetentionAnchor, retentionAnchorProblem } from './retention-anchor';

export interface InvalidLog {
  /** The position where the chain first fails; `id` is absent when no log is there (deleted, truncated). */
  position: number;
  id?: string;
  reason: string;
}

export interface InvalidCheckpoint {
  position: number;
  signedAt: string;
  reason: string;
}

export interface ChainVerification {
  tenantId: string;
  /** True when every log verifies and every checkpoint is genuine and matches the chain. */
  valid: boolean;
  logs: number;
  head: { position: number; hash: string };
  checkpoints: number;
  /** Where the retained trail starts: the logs up to this position were removed by retention (its signed anchor). */
  anchor?: { position: number; signedAt: string };
  /** The newest checkpoint that is genuine and matches: every log up to it is proven unaltered. */
  lastVerifiedCheckpoint?: { position: number; signedAt: string };
  /** Logs after the newest checkpoint: chained, not yet signed (the next checkpoint will cover them). */
  unsignedLogs: number;
  firstInvalidLog?: InvalidLog;
  invalidCheckpoints: InvalidCheckpoint[];
}

/**
 * Verifies one tenant's chain as its logs stream past, in position order, in constant memory: every log's
 * hash is recomputed from its content and its predecessor's hash, positions must run 1, 2, 3 ... without gaps,
 * and at each checkpoint's position the recomputed hash must be the signed one. Someone who rewrites a log and
 * recomputes every later hash (a database superuser can) still cannot make the signed checkpoints match: the
 * logs after the last matching checkpoint are then the first that do not verify.
 */
export class ChainVerifier {
  private position = 0;
  private hash = GENESIS_HASH;
  private readonly pending: LogCheckpoint[] = [];
  private lastGood?: LogCheckpoint;
  /** Id of the first log after the last matching checkpoint: where an undetectable-by-hash rewrite begins. */
  private firstAfterGood?: string;
  private firstInvalid?: InvalidLog;
  private readonly invalidCheckpoints: InvalidCheckpoint[] = [];
  private count = 0;
  private matched = 0;

  private readonly keys: PublicKeySet;
  private readonly anchor?: RetentionAnchor;

  /**
   * `keys`: every public key whose checkpoints are accepted (the current one and the retired ones: keys rotate).
   * `anchor`: the newest retention anchor, when retention removed the oldest logs: the chain is verified from it (its
   * position and hash stand for the removed logs), once its signature verifies; an anchor that does not is a failure.
   */
  constructor(
    private readonly tenantId: string,
    keys: KeyObject | readonly KeyObject[] | PublicKeySet,
    anchor?: RetentionAnchor,
  ) {
    this.keys = keys instanceof PublicKeySet ? keys : new PublicKeySet(keys);
    if (anchor === undefined) return;
    const problem = retentionAnchorProblem(anchor, tenantId, this.keys);
    if (problem !== undefined) {
      this.fail({ position: anchor.position, reason: problem });
      return;
    }
    this.anchor = anchor;
    this.position = anchor.position;
    this.hash = anchor.hash;
  }

  /**
   * Checkpoints to hold the chain against, given before the logs they cover are fed (all at once, or batch by
   * batch in position order); each one's signature is checked here.
   */
  addCheckpoints(checkpoints: LogCheckpoint[]): void {
    for (const checkpoint of checkpoints) {
      const bad = (reason: string) => this.invalidCheckpoints.push({ position: checkpoint.position, signedAt: checkpoint.signedAt.toISOString(), reason });
      if (checkpoint.tenantId !== this.tenantId) bad(`belongs to tenant ${checkpoint.tenantId}`);
      else if (!this.keys.get(checkpoint.keyId)) bad(`signed by key ${checkpoint.keyId}, not by the given key ${this.keys.ids().join(', ')}`);
      else if (!checkpointSignatureValid(checkpoint, this.keys.get(checkpoint.keyId)!)) bad('signature does not verify: the checkpoint was forged or altered');
      // Covers logs that retention removed: nothing left to hold it against (the anchor stands for them).
      else if (this.anchor && checkpoint.position <= this.anchor.position) continue;
      else if (checkpoint.position <= this.position) bad(`given after the logs it covers were verified`);
      else this.pending.push(checkpoint);
    }
    this.pending.sort((a, b) => a.position - b.position);
  }

  /** Feeds the next log; false once the chain has failed (nothing after the first failure is meaningful). */
  add(log: Log): boolean {
    if (this.firstInvalid) return false;
    const expected = this.position + 1;
    this.count += 1;
    if (log.tenantId !== this.tenantId) return this.fail({ position: log.position, id: log.id, reason: `belongs to tenant ${log.tenantId}` });
    if (log.position !== expected) {
      if (log.position < expected)
        return this.fail({ position: log.position, id: log.id, reason: `position ${log.position} appears twice (a log was inserted)` });
      return this.fail({
        position: expected,
        reason: `no log at position ${expected} (a log was deleted); the next is position ${log.position}, id ${log.id}`,
      });
    }
    const hash = chainHash(this.hash, log, expected);
    if (hash !== log.hash) {
      return this.fail({ position: expected, id: log.id, reason: 'its content or its predecessor does not match its hash (altered, inserted or reordered)' });
    }
    this.position = expected;
    this.hash = hash;
    this.firstAfterGood ??= log.id;
    return this.checkCheckpointsAt(log.id);
  }

  /** Ends the stream: checkpoints beyond the last log mean logs were removed from the end. */
  finish(): ChainVerification {
    if (!this.firstInvalid && this.pending.length > 0) {
      const beyond = this.pending[this.pending.length - 1]!;
      this.fail({
        position: this.position + 1,
        reason: `the chain ends at position ${this.position} but a checkpoint signed at ${beyond.signedAt.toISOString()} covers position ${beyond.position}: logs were removed from the end`,
      });
    }
    const lastCheckpointed = this.lastGood?.position ?? this.anchor?.position ?? 0;
    return {
      tenantId: this.tenantId,
      valid: !this.firstInvalid && this.invalidCheckpoints.length === 0,
      logs: this.count,
      head: { position: this.position, hash: this.hash },
      anchor: this.anchor ? { position: this.anchor.position, signedAt: this.anchor.signedAt.toISOString() } : undefined,
      checkpoints: this.invalidCheckpoints.length + this.pending.length + this.matched,
      lastVerifiedCheckpoint: this.lastGood ? { position: this.lastGood.position, signedAt: this.lastGood.signedAt.toISOString() } : undefined,
      unsignedLogs: this.firstInvalid ? 0 : this.position - lastCheckpointed,
      firstInvalidLog: this.firstInvalid,
      invalidCheckpoints: this.invalidCheckpoints,
    };
  }

  private checkCheckpointsAt(id: string): boolean {
    while (this.pending.length > 0 && this.pending[0]!.position === this.position) {
      const checkpoint = this.pending.shift()!;
      if (checkpoint.hash !== this.hash) {
        const from = (this.lastGood?.position ?? this.anchor?.position ?? 0) + 1;
        return this.fail({
          position: from,
          id: from === this.position ? id : this.firstAfterGood,
          reason:
            `the logs from position ${from} to ${this.position} do not match the checkpoint signed at ${checkpoint.signedAt.toISOString()}: ` +
            'one of them was altered, inserted, removed or reordered and the later hashes recomputed',
        });
      }
      this.matched += 1;
      this.lastGood = checkpoint;
      this.firstAfterGood = undefined;
    }
    return true;
  }

  private fail(invalid: InvalidLog): false {
    this.firstInvalid ??= invalid;
    return false;
  }
}
