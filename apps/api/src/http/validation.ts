import { ArgumentMetadata, Injectable, PipeTransform, ValidationPipe } from '@nestjs/common';
import type { ValidationError as ClassValidatorError } from 'class-validator';
import { FieldErrors, UUID_PATTERN, ValidationError } from '@gatehouse/domain';

/** The global pipe: DTO classes validate shape and types; unknown fields are refused, never ignored. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    stopAtFirstError: false,
    exceptionFactory: (errors) => new ValidationError(flattenErrors(errors)),
  });
}

/** class-validator's tree as `rules[0].conditions[1].value` paths, the form CONTRACT.md section 2 names. */
export function flattenErrors(errors: ClassValidatorError[], parent = ''): FieldErrors {
  const out: FieldErrors = {};
  for (const error of errors) {
    const path = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent
        ? `${parent}.${error.property}`
        : error.property;
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
