import { ChainVerification, LogRepository } from '@gatehouse/domain';
import type { TestApp } from '@gatehouse/test-support/test-app';
import type { KeyObject } from 'node:crypto';
import { verifierOf } from './retention-fixtures';

/**
 * `VerifyLogChain` over the app's repositories, with `meanwhile` run once between its reading of the tenant's anchor
 * and of its first page (just before its first read of the highest position): a deterministic interleaving of a
 * verification and whatever moves the trail under it (retention). `passes`: how many passes the verification took.
 */
export async function verifyWhile(
  t: TestApp,
  tenantId: string,
  keys: KeyObject[],
  meanwhile: () => Promise<unknown>,
): Promise<{ result: ChainVerification; passes: number }> {
  let passes = 0;
  const racing = new Proxy(t.app.get(LogRepository), {
    get(target, prop) {
      if (prop === 'highestPosition')
        return async (id: string) => {
          if (passes++ === 0) await meanwhile();
          return target.highestPosition(id);
        };
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const result = await verifierOf(t, racing).execute(tenantId, keys);
  return { result, passes };
}
