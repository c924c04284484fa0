import { Principal } from '../applications/principal';
import { FieldErrorCollector } from '../shared/domain-error';
import { Page, PageQuery } from '../shared/page';
import { ChainedLog, isEntityType, MAX_ENTITY_ID_LENGTH } from './log';
import { LogFilter, LogRepository } from './log.repository';

/** `GET /logs`: the caller's tenant only, newest first, filtered (spec 4.1, CONTRACT.md sections 1 and 8). */
export class ListLogs {
  constructor(private readonly logs: LogRepository) {}

  async execute(principal: Principal, filter: LogFilter, page: PageQuery): Promise<Page<ChainedLog>> {
    validateLogFilter(filter);
    return this.logs.list(principal.tenantId, filter, page);
  }
}

/** The rules of a log filter, shared by the list and the export; a ValidationError names every bad field. */
export function validateLogFilter(filter: LogFilter): void {
  const errors = new FieldErrorCollector();
  if (filter.entityType !== undefined && !isEntityType(filter.entityType)) {
    errors.add('entity_type', 'must be one of the values of GET /logs/entity-types');
  }
  if (filter.entityId !== undefined && (filter.entityId.length === 0 || filter.entityId.length > MAX_ENTITY_ID_LENGTH)) {
    errors.add('entity_id', `must be 1 to ${MAX_ENTITY_ID_LENGTH} characters`);
  }
  for (const [field, date] of [['start_date', filter.startDate], ['end_date', filter.endDate]] as const) {
    if (date !== undefined && Number.isNaN(date.getTime())) errors.add(field, 'must be an ISO 8601 date-time');
  }
  if (filter.startDate && filter.endDate && filter.endDate.getTime() <= filter.startDate.getTime()) {
    errors.add('end_date', 'must be later than start_date');
  }
  errors.throwIfAny();
}
