import { parseVaultKey } from '@gatehouse/config';
import { LocalKeyWrapper } from '@gatehouse/persistence';
import { TEST_VAULT_KEY } from './test-env';

/** The key wrapper every test process uses (TEST_VAULT_KEY), plus older keys for rotation tests. */
export function testKeyWrapper(current: string = TEST_VAULT_KEY, previous: string[] = []): LocalKeyWrapper {
  return new LocalKeyWrapper(() => ({ current: parseVaultKey(current), previous: previous.map(parseVaultKey), source: 'test' }));
}
