import { Module } from '@nestjs/common';
import {
  ExportLogs,
  GetRetentionAnchor,
  ListLogCheckpoints,
  ListLogs,
  LogCheckpointRepository,
  LogRepository,
  LogRetentionRepository,
  UnitOfWork,
} from '@gatehouse/domain';
import { useCase } from '../use-case.provider';
import { LogsController } from './logs.controller';

/** `GET /logs` and `GET /logs/entity-types`; the log ports come from the global PersistenceModule. */
@Module({
  controllers: [LogsController],
  providers: [
    useCase(ListLogs, [LogRepository]),
    useCase(ListLogCheckpoints, [LogCheckpointRepository]),
    useCase(ExportLogs, [LogRepository, UnitOfWork]),
    useCase(GetRetentionAnchor, [LogRetentionRepository]),
  ],
})
export class LogsModule {}
