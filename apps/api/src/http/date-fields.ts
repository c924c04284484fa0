import type { ApiPropertyOptions } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';

// RFC 3339: a full-date, and a date-time with seconds and an offset. ISO 8601 admits far more (week and ordinal dates,
// a year alone, a time without an offset, which `new Date` reads in the server's zone): none of it is taken.
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(\.\d{1,9})?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** What the OpenAPI document says of a date-or-date-time (a date-time is the plain `format: 'date-time'`). */
export const DATE_OR_DATE_TIME_SCHEMA: ApiPropertyOptions = { type: String, anyOf: [{ format: 'date' }, { format: 'date-time' }] };

const DATE_TIME_MESSAGE = 'must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00.000Z';
const DATE_OR_DATE_TIME_MESSAGE = 'must be a date (2026-11-21) or an RFC 3339 date-time with an offset (2026-11-21T10:00:00.000Z)';

/** Whether year-month-day is a day of the calendar (no 2026-02-30). */
function realDay(year: string, month: string, day: string): boolean {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day) && Number(year) >= 1;
}

export function isDateTime(value: unknown): boolean {
  const match = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  return match !== null && realDay(match[1]!, match[2]!, match[3]!);
}

export function isDateOrDateTime(value: unknown): boolean {
  const match = typeof value === 'string' ? FULL_DATE.exec(value) : null;
  return (match !== null && realDay(match[1]!, match[2]!, match[3]!)) || isDateTime(value);
}

/** class-validator: an RFC 3339 date-time with an offset (the document's `format: date-time`). */
export const IsDateTime = (): PropertyDecorator =>
  ValidateBy({ name: 'isDateTime', validator: { validate: isDateTime, defaultMessage: () => DATE_TIME_MESSAGE } });

/** class-validator: a date alone or an RFC 3339 date-time (the document's `anyOf: [date, date-time]`). */
export const IsDateOrDateTime = (): PropertyDecorator =>
  ValidateBy({ name: 'isDateOrDateTime', validator: { validate: isDateOrDateTime, defaultMessage: () => DATE_OR_DATE_TIME_MESSAGE } });
