import { randomUUID } from 'node:crypto';
import { generateProxyKey, Proxy } from '@gatehouse/domain';

export const PROXY_RECORD_T0 = Date.parse('2026-11-21T10:00:00.000Z');

/** A proxy record of `tenantId` as a repository stores it, for tests below the API. */
export function aProxyRecord(tenantId: string, over: Partial<Proxy> = {}): Proxy {
  return {
    id: randomUUID(),
    tenantId,
    name: 'payments',
    key: generateProxyKey(),
    destinationUrl: 'https://api.example.com/v1',
    requestTransform: null,
    responseTransform: null,
    configuration: null,
    applicationId: null,
    requireAuth: true,
    rateLimit: null,
    createdBy: randomUUID(),
    createdAt: new Date(PROXY_RECORD_T0),
    modifiedBy: null,
    modifiedAt: new Date(PROXY_RECORD_T0),
    ...over,
  };
}
