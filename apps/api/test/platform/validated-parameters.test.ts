import type { PipeTransform, Type } from '@nestjs/common';
import { CUSTOM_ROUTE_ARGS_METADATA, METHOD_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { ModulesContainer } from '@nestjs/core';
import { getMetadataStorage } from 'class-validator';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';
import { UuidParamPipe, VALIDATION_PIPE } from '../../src/http/validation';
import { TokenIdParamPipe } from '../../src/tokens/tokens.controller';

interface RouteArg {
  index: number;
  data?: unknown;
  pipes?: Array<PipeTransform | Type<PipeTransform>>;
}

interface Parameter {
  route: string;
  kind: string;
  type: number | string;
  arg: RouteArg;
  metatype: unknown;
}

/**
 * Validation is no global pipe (it would run on every parameter of every request, see VALIDATION_PIPE): each body and
 * query validates through its own. This walks every handler of every controller of the running API, so that a route
 * added without it (a plain `@Body()`) fails here instead of taking unvalidated input.
 */
describe('every parameter that carries request input is validated', () => {
  let t: TestApp;
  let parameters: Parameter[];
  beforeAll(async () => {
    t = await startTestApp();
    parameters = [];
    for (const module of t.app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as Type;
        for (const name of Object.getOwnPropertyNames(controller.prototype)) {
          const handler = controller.prototype[name];
          if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
          const args: Record<string, RouteArg> = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {};
          const types: unknown[] = Reflect.getMetadata('design:paramtypes', controller.prototype, name) ?? [];
          for (const [key, arg] of Object.entries(args)) {
            const type = key.split(':')[0]!;
            parameters.push({
              route: `${controller.name}.${name}`,
              kind: key,
              type: /^\d+$/.test(type) ? Number(type) : type,
              arg,
              metatype: types[arg.index],
            });
          }
        }
      }
    }
  }, 60_000);
  afterAll(() => t.close());

  it('finds the routes that take input', () => {
    const routes = new Set(parameters.map((p) => p.route));
    for (const route of [
      'ApplicationsController.create',
      'ApplicationsController.list',
      'ApplicationsController.regenerate',
      'ProxiesController.patch',
      'LogsController.list',
    ]) {
      expect(routes).toContain(route);
    }
  });

  it('validates every body and query with the validation pipe and a DTO class that has rules', () => {
    const bodiesAndQueries = parameters.filter((p) => p.type === RouteParamtypes.BODY || p.type === RouteParamtypes.QUERY);
    expect(bodiesAndQueries.length).toBeGreaterThanOrEqual(10);
    for (const p of bodiesAndQueries) {
      expect({ route: p.route, validated: p.arg.pipes?.includes(VALIDATION_PIPE) ?? false }).toEqual({ route: p.route, validated: true });
      // The whole body or query (`@ValidatedQuery('name')` would validate one value against nothing).
      expect({ route: p.route, data: p.arg.data }).toEqual({ route: p.route, data: undefined });
      const rules = typeof p.metatype === 'function' ? getMetadataStorage().getTargetValidationMetadatas(p.metatype, '', true, false) : [];
      expect({ route: p.route, dtoRules: rules.length > 0 }).toEqual({ route: p.route, dtoRules: true });
    }
  });

  it('checks every path parameter with a pipe of its own', () => {
    const pathParameters = parameters.filter((p) => p.type === RouteParamtypes.PARAM);
    expect(pathParameters.length).toBeGreaterThan(0);
    // Token ids are the tenant's own strings (CONTRACT.md section 12), checked by their own pipe.
    for (const p of pathParameters) {
      const pipe = p.route.startsWith('TokensController.') ? TokenIdParamPipe : UuidParamPipe;
      expect({ route: p.route, pipes: p.arg.pipes }).toEqual({ route: p.route, pipes: [pipe] });
    }
  });

  it('takes request input in no other way (headers, files, raw bodies, cookies would need their own validation)', () => {
    const allowed = new Set<number | string>([
      RouteParamtypes.REQUEST,
      RouteParamtypes.RESPONSE,
      RouteParamtypes.NEXT,
      RouteParamtypes.BODY,
      RouteParamtypes.QUERY,
      RouteParamtypes.PARAM,
    ]);
    // Custom decorators (`<id>__customRouteArgs__:<index>`: the principal) read what the guard put on the request.
    const other = parameters.filter((p) => !allowed.has(p.type) && !String(p.type).includes(CUSTOM_ROUTE_ARGS_METADATA));
    expect(other.map((p) => `${p.route} ${p.kind}`)).toEqual([]);
  });
});
