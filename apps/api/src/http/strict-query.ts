import { ExecutionContext, Injectable, Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { getMetadataStorage } from 'class-validator';
import type { Request } from 'express';
import { FieldErrors, ValidationError } from '@gatehouse/domain';

export type QueryValues = Record<string, string | string[]>;

/**
 * `a=1&b=x+y&a=2` as a null-prototype object (`__proto__` is a name like any other; repeated names give an array),
 * and the names whose name or value is not valid percent-encoded UTF-8 (decoding them would only give U+FFFD).
 */
export function parseQueryString(raw: string): { values: QueryValues; malformed: string[] } {
  const values: QueryValues = Object.create(null);
  const malformed: string[] = [];
  for (const piece of raw.split('&')) {
    if (piece === '') continue;
    const at = piece.indexOf('=');
    const rawName = at < 0 ? piece : piece.slice(0, at);
    const name = decode(rawName);
    const value = decode(at < 0 ? '' : piece.slice(at + 1));
    if (name === undefined || value === undefined) {
      malformed.push(name ?? shortened(rawName));
      continue;
    }
    const previous = values[name];
    values[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return { values, malformed };
}

/** Express's `query parser`: the same decoding as the check below, so a DTO sees exactly what was checked. */
export function queryParser(raw: string | null | undefined): QueryValues {
  // Express passes null when the URL has no query string at all.
  return parseQueryString(raw ?? '').values;
}

function decode(text: string): string | undefined {
  try {
    // decodeURIComponent refuses invalid UTF-8, overlong forms and encoded surrogates; `+` is a space (forms).
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function shortened(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}...` : text;
}

/**
 * Every query parameter a route does not declare is a 400 naming it, whatever the name (`__proto__`, `constructor`,
 * `toString` included: class-transformer would drop those before the DTO's whitelist saw them), and so is one that is
 * not valid percent-encoded UTF-8. A route declares its parameters with one `@ValidatedQuery() dto: SomeQueryDto`; a route
 * without one takes none. The `/proxy` data plane is not a Nest route: its query string belongs to the destination.
 *
 * Checked by the ApiKeyGuard once it has let a request through (after its 401, 429 and 403, before any pipe's 400),
 * where an interceptor of this ran before: any interceptor makes Nest run every request of every route through an
 * RxJS pipeline (CPU on every request: docs/benchmarks/history.md), for a check that needs none.
 */
@Injectable()
export class StrictQuery {
  private readonly declared = new WeakMap<object, ReadonlySet<string>>();

  /** Throws the 400 (a ValidationError) when the request's query string has a name its route does not declare. */
  check(context: ExecutionContext): void {
    if (context.getType() !== 'http') return;
    const req = context.switchToHttp().getRequest<Request>();
    const at = req.originalUrl.indexOf('?');
    if (at >= 0) this.refuseUndeclared(parseQueryString(req.originalUrl.slice(at + 1)), this.declaredFor(context));
  }

  private refuseUndeclared(query: { values: QueryValues; malformed: string[] }, declared: ReadonlySet<string>): void {
    const errors: FieldErrors = Object.create(null);
    for (const name of query.malformed) (errors[name] ??= []).push('is not valid percent-encoded UTF-8');
    for (const name of Object.keys(query.values)) {
      if (!declared.has(name) && !hasDeclaredPrefix(name, declared)) (errors[shortened(name)] ??= []).push('is not allowed');
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  }

  private declaredFor(context: ExecutionContext): ReadonlySet<string> {
    const handler = context.getHandler();
    let names = this.declared.get(handler);
    if (!names) {
      names = queryParametersOf(context.getClass(), handler);
      this.declared.set(handler, names);
    }
    return names;
  }
}

/** Whether `name` starts with a prefix the DTO declares (`metadata.*`: any `metadata.<key>`). */
function hasDeclaredPrefix(name: string, declared: ReadonlySet<string>): boolean {
  for (const entry of declared) if (entry.endsWith('*') && name.startsWith(entry.slice(0, -1)) && name.length >= entry.length) return true;
  return false;
}

/**
 * A query DTO whose parameter names are open after a prefix (GET /v2/tokens's `metadata.<key>`) names the prefixes in a
 * static `queryNamePrefixes`; its route reads those parameters apart from the DTO.
 */
export interface QueryNamePrefixes {
  queryNamePrefixes?: readonly string[];
}

/** The properties of the handler's `@Query()` DTO class (what class-validator whitelists), or `@Query('name')` names. */
function queryParametersOf(controller: Type, handler: { name: string }): ReadonlySet<string> {
  const args: Record<string, { index: number; data?: unknown }> = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {};
  const types: unknown[] = Reflect.getMetadata('design:paramtypes', controller.prototype, handler.name) ?? [];
  const names = new Set<string>();
  for (const [key, arg] of Object.entries(args)) {
    if (Number(key.split(':')[0]) !== RouteParamtypes.QUERY) continue;
    if (typeof arg.data === 'string') {
      names.add(arg.data);
      continue;
    }
    const dto = types[arg.index];
    if (typeof dto !== 'function') continue;
    for (const metadata of getMetadataStorage().getTargetValidationMetadatas(dto as Type, '', true, false)) names.add(metadata.propertyName);
    for (const prefix of (dto as QueryNamePrefixes).queryNamePrefixes ?? []) names.add(`${prefix}*`);
  }
  return names;
}
