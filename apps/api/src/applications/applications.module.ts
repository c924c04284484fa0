import { Module } from '@nestjs/common';
import {
  ApplicationExpiryScheduler,
  ApplicationRepository,
  Clock,
  CreateApplication,
  DeleteApplication,
  GetApplication,
  ListApplications,
  RegenerateApplicationKey,
  UnitOfWork,
  UpdateApplication,
} from '@gatehouse/domain';
import { useCase } from '../use-case.provider';
import { ApplicationsController } from './applications.controller';

/** `/applications`; the ports come from the global persistence and background-jobs modules. */
@Module({
  controllers: [ApplicationsController],
  providers: [
    useCase(CreateApplication, [UnitOfWork, Clock, ApplicationExpiryScheduler]),
    useCase(UpdateApplication, [UnitOfWork, Clock]),
    useCase(RegenerateApplicationKey, [UnitOfWork, Clock]),
    useCase(DeleteApplication, [UnitOfWork]),
    useCase(GetApplication, [ApplicationRepository]),
    useCase(ListApplications, [ApplicationRepository]),
  ],
})
export class ApplicationsModule {}
