import { parseSigningKey } from '@gatehouse/config';
import {
  AuditEvent,
  CheckpointSigner,
  LogChainWriter,
  LogCheckpointRepository,
  LogRepository,
  LogRetentionRepository,
  SignLogCheckpoints,
  SystemClock,
  VerifyLogChain,
} from '@gatehouse/domain';
import { tokenReads } from '@gatehouse/domain/testing';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { TEST_LOG_SIGNING_KEY } from '@gatehouse/test-support/test-env';

export const DAY = 86_400_000;

/** The signer of the test key (TEST_LOG_SIGNING_KEY): checkpoints and retention anchors the test apps verify. */
export const signer = new CheckpointSigner(() => parseSigningKey(TEST_LOG_SIGNING_KEY));

/** Appends `count` token reads of `tenantId` to its chain, the first `ageMs` ago and a second apart; returns them. */
export async function appendTokenReads(t: TestApp, tenantId: string, count: number, ageMs: number, from = 0): Promise<AuditEvent[]> {
  const logs = tokenReads(tenantId, count, new Date(Date.now() - ageMs), from);
  await t.app.get(LogChainWriter).append(logs);
  return logs;
}

/** The chain verifier over the app's repositories (its log reads from `logs` when a test interposes). */
export function verifierOf(t: TestApp, logs: LogRepository = t.app.get(LogRepository)): VerifyLogChain {
  return new VerifyLogChain(logs, t.app.get(LogCheckpointRepository), t.app.get(LogRetentionRepository));
}

/** The worker's checkpoint signing, now, with `by` (the test key unless told). */
export function signCheckpoints(t: TestApp, by: CheckpointSigner = signer): Promise<number> {
  return new SignLogCheckpoints(t.app.get(LogCheckpointRepository), by, new SystemClock()).execute();
}
