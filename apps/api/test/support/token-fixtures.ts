import type { TestApp } from '@gatehouse/test-support/test-app';
import { as, Caller, createApplication } from './application-fixtures';

export const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };

/** Requests carrying `key`, with PATCH as a merge patch. */
export function tokensAs(t: TestApp, key: string) {
  const base = as(t, key);
  return {
    ...base,
    patch: (path: string, body: unknown) =>
      t.http().patch(path).set('SVC-API-KEY', key).set('content-type', 'application/merge-patch+json').send(JSON.stringify(body)),
  };
}

/** A private application of the admin's tenant holding `permissions` and `rules`, with its key. */
export async function privateApp(t: TestApp, admin: Caller, permissions: string[], rules: object[] = []): Promise<string> {
  const body: Record<string, unknown> = { name: `vault ${permissions.join(' ')}`, type: 'private', permissions };
  if (rules.length > 0) body.rules = rules;
  return (await createApplication(t, admin.key, body)).key;
}

export async function publicApp(t: TestApp, admin: Caller, permissions: string[], rules: object[] = []): Promise<string> {
  const body: Record<string, unknown> = { name: 'vault public', type: 'public', permissions };
  if (rules.length > 0) body.rules = rules;
  return (await createApplication(t, admin.key, body)).key;
}

/** Creates a token (201 asserted) and returns the response body. */
export async function createToken(t: TestApp, key: string, body: object): Promise<Record<string, any>> {
  const res = await as(t, key).post('/tokens', body);
  if (res.status !== 201) throw new Error(`token create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A rule on `container` granting `permissions` with `transform`. */
export function rule(priority: number, container: string, transform: 'reveal' | 'mask' | 'redact', permissions: string[]) {
  return { priority, container, transform, permissions };
}
