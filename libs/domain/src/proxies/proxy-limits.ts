import { FieldErrorCollector } from '../shared/domain-error';
import { TransactionScope } from '../shared/unit-of-work';
import { ProxyRepository } from './proxy.repository';

/**
 * What one proxy's configuration and one tenant's may cost: every list page, proxy cache entry and invocation carries
 * a configuration whole. The per-entry limits (100 entries of 10,000 characters) alone allowed about 1 MB per proxy,
 * and 100 such proxies made one `GET /proxies?size=100` build a 100 MB body.
 */
export const MAX_CONFIGURATION_BYTES = 64 * 1024;
export const MAX_TENANT_CONFIGURATION_BYTES = 4 * 1024 * 1024;

/** A configuration's size: its JSON in UTF-8, as a response carries it. */
export function configurationBytes(configuration: Record<string, string> | null | undefined): number {
  return configuration ? Buffer.byteLength(JSON.stringify(configuration)) : 0;
}

/**
 * Checks the configuration of a proxy being written against both limits, into `errors`. The tenant's total is read
 * only when the configuration grows (a write that leaves it as it was, or shrinks it, passes even over a limit lowered
 * since). `proxyId`: the proxy being replaced, whose stored configuration the new one takes the place of.
 */
export async function checkConfigurationCost(
  tx: TransactionScope,
  tenantId: string,
  configuration: Record<string, string> | null | undefined,
  previous: Record<string, string> | null | undefined,
  proxyId: string | undefined,
  errors: FieldErrorCollector,
): Promise<void> {
  const size = configurationBytes(configuration);
  if (size === 0 || size <= configurationBytes(previous)) return;
  if (size > MAX_CONFIGURATION_BYTES) {
    errors.add('configuration', `must be at most ${MAX_CONFIGURATION_BYTES} bytes in all (as JSON, UTF-8); this one is ${size}`);
    return;
  }
  const others = await tx.get(ProxyRepository).configurationBytes(tenantId, proxyId);
  if (others + size > MAX_TENANT_CONFIGURATION_BYTES) {
    errors.add(
      'configuration',
      `would take this tenant's proxies past ${MAX_TENANT_CONFIGURATION_BYTES} bytes of configuration in all (${others} in use by its other proxies, ${size} here)`,
    );
  }
}
