import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { ApplicationConfig, ModulesContainer } from '@nestjs/core';
import type { TestApp } from '@gatehouse/test-support/test-app';
import { ANY_UUID, appWithTenant, as, Caller, createApplication, expectProblem } from '../support/application-fixtures';

/**
 * Which refusal a request gets when several apply: 401 (no or a bad key), 429 (the key's rate limit), 403 (the
 * permission), then 400 for a query parameter the route does not declare (StrictQuery, checked by the guard), then 400
 * for a body or query its DTO refuses (the route's validation pipe), then what the handler finds (404).
 */
describe('the order of refusals', () => {
  let t: TestApp;
  let admin: Caller;
  beforeAll(async () => ({ t, admin } = await appWithTenant()), 60_000);
  afterAll(() => t.close());

  it('401 before the query string is looked at', async () => {
    const res = await t.http().get(`/applications/${ANY_UUID}?foo=1`);
    expectProblem(res, 401);
    expectProblem(await t.http().get(`/applications/${ANY_UUID}?foo=1`).set('SVC-API-KEY', 'key_nonsense'), 401);
  });

  it('429, then 403, before the query string is looked at', async () => {
    const limited = await createApplication(t, admin.key, {
      name: 'one',
      type: 'management',
      permissions: ['application:read'],
      rate_limit: { limit: 1, window_seconds: 600 },
    });
    // The one request it may make is refused for the permission, not for the query string.
    expectProblem(await as(t, limited.key).get('/logs?foo=1'), 403);
    expectProblem(await as(t, limited.key).get('/applications?foo=1'), 429);
  });

  it('the query string before the validation of a body, and before the handler', async () => {
    const res = await as(t, admin.key).post('/applications?foo=1', { name: '' });
    expectProblem(res, 400, ['foo']);
    expect(Object.keys(res.body.errors)).toEqual(['foo']);
    expectProblem(await as(t, admin.key).get(`/applications/${ANY_UUID}?foo=1`), 400, ['foo']);
    expectProblem(await as(t, admin.key).get(`/applications/${ANY_UUID}`), 404);
  });

  it('a public route checks its query string too', async () => {
    await t.http().get('/health/live').expect(200);
    expectProblem(await t.http().get('/health/live?foo=1'), 400, ['foo']);
  });

  it('runs no interceptor: with one, Nest puts every request of every route through an RxJS pipeline', () => {
    expect(t.app.get(ApplicationConfig).getGlobalInterceptors()).toEqual([]);
    const withInterceptors: string[] = [];
    for (const module of t.app.get(ModulesContainer).values()) {
      if ([...module.providers.keys()].some((key) => String(key).startsWith('APP_INTERCEPTOR'))) withInterceptors.push(module.name);
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as { name: string; prototype: Record<string, unknown> };
        if (Reflect.getMetadata(INTERCEPTORS_METADATA, controller)) withInterceptors.push(controller.name);
        for (const name of Object.getOwnPropertyNames(controller.prototype)) {
          const handler = controller.prototype[name];
          if (typeof handler === 'function' && Reflect.getMetadata(INTERCEPTORS_METADATA, handler)) withInterceptors.push(`${controller.name}.${name}`);
        }
      }
    }
    expect(withInterceptors).toEqual([]);
  });
});
