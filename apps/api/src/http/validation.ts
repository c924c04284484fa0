import { ArgumentMetadata, Body, Injectable, PipeTransform, Query, ValidationPipe } from '@nestjs/common';
import type { ValidationError as ClassValidatorError } from 'class-validator';
import { FieldErrors, stringMap, UUID_PATTERN, ValidationError } from '@gatehouse/domain';
import { FREE_FORM_MAPS } from './json-body';

/**
 * A free-form map (a proxy's `configuration`) never goes through class-transformer or Nest's prototype-key stripping:
 * both drop members named like Object.prototype's (`toString`, `constructor`, `__proto__`...), which are the caller's
 * data here, and class-transformer fails on some. The DTO validates a stand-in `{}` (so a non-object still fails its
 * `@IsObject`), and the map itself is put back afterwards as a null-prototype copy. The JSON body parser has already
 * refused those names everywhere else.
 */
class StrictValidationPipe implements PipeTransform {
  constructor(private readonly validation: ValidationPipe) {}

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'body' || !isPlainObject(value)) return this.validation.transform(value, metadata);
    const maps = new Map<string, Record<string, unknown>>();
    for (const name of FREE_FORM_MAPS) {
      const member = value[name];
      if (!isPlainObject(member)) continue;
      maps.set(name, stringMap(Object.entries(member)));
      value[name] = {};
    }
    const dto = (await this.validation.transform(value, metadata)) as Record<string, unknown>;
    for (const [name, map] of maps) dto[name] = map;
    return dto;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** DTO classes validate shape and types; unknown fields are refused, never ignored. */
export function createValidationPipe(): PipeTransform {
  return new StrictValidationPipe(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      forbidUnknownValues: true,
      stopAtFirstError: false,
      exceptionFactory: (errors) => new ValidationError(flattenErrors(errors)),
    }),
  );
}

/**
 * The validation of every request body and query: `@ValidatedBody() dto: SomeDto`, `@ValidatedQuery() query: SomeQueryDto`.
 * Not a global pipe: Nest runs a global pipe on every parameter of every route, the principal and the path ids
 * included, for nothing (each a few promises on every request); here it runs where there is a DTO to validate. A test
 * (validated-parameters.test.ts) walks every controller's parameters, so that a route cannot take a body or a query
 * without it.
 */
export const VALIDATION_PIPE = createValidationPipe();

/** `@Body()`, validated by the DTO class of its parameter's type. */
export const ValidatedBody = (): ParameterDecorator => Body(VALIDATION_PIPE);

/** `@Query()`, validated by the DTO class of its parameter's type (StrictQuery refuses undeclared names). */
export const ValidatedQuery = (): ParameterDecorator => Query(VALIDATION_PIPE);

/** class-validator's tree as `rules[0].conditions[1].value` paths, the form CONTRACT.md section 2 names. */
export function flattenErrors(errors: ClassValidatorError[], parent = ''): FieldErrors {
  const out: FieldErrors = {};
  for (const error of errors) {
    const path = /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : parent ? `${parent}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) {
      (out[path || 'body'] ??= []).push(message.replace(/^property \S+ should not exist$/, 'is not allowed'));
    }
    Object.assign(out, flattenErrors(error.children ?? [], path));
  }
  return out;
}

/** A path id that is not a UUID is a 400 naming the parameter, before anything is looked up. */
@Injectable()
export class UuidParamPipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    if (typeof value !== 'string' || !UUID_PATTERN.test(value)) {
      throw ValidationError.single(metadata.data ?? 'id', 'must be a UUID');
    }
    return value.toLowerCase();
  }
}
