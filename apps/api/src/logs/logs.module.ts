import { Module } from '@nestjs/common';
import { ListLogs, LogRepository } from '@gatehouse/domain';
import { LogsController } from './logs.controller';

/** `GET /logs` and `GET /logs/entity-types`; the LogRepository comes from the global PersistenceModule. */
@Module({
  controllers: [LogsController],
  providers: [{ provide: ListLogs, inject: [LogRepository], useFactory: (logs: LogRepository) => new ListLogs(logs) }],
})
export class LogsModule {}
