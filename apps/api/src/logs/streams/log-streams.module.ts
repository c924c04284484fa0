import { DynamicModule, Module } from '@nestjs/common';
import {
  Clock,
  CreateLogStream,
  DeleteLogStream,
  GetLogStream,
  ListLogStreams,
  LogStreamRepository,
  PauseLogStream,
  ResumeLogStream,
  StreamValidationContext,
  UnitOfWork,
  UpdateLogStream,
} from '@gatehouse/domain';
import { AppConfig } from '@gatehouse/config';
import { IpDestinationPolicy } from '../../proxy-invocation/destination-policy';
import { useCase } from '../../use-case.provider';
import { LogStreamsController } from './log-streams.controller';

const STREAM_VALIDATION = Symbol('STREAM_VALIDATION');

/** `/logs/streams`: log stream management (the worker delivers them). Destinations follow the proxies' policy. */
@Module({})
export class LogStreamsApiModule {
  static forRoot(config: AppConfig): DynamicModule {
    const context: StreamValidationContext = {
      policy: new IpDestinationPolicy(config.proxyAllowHttp, config.proxyAllowedPrivateCidrs),
      allowPlainSyslog: config.logStreamAllowPlainSyslog,
    };
    return {
      module: LogStreamsApiModule,
      controllers: [LogStreamsController],
      providers: [
        { provide: STREAM_VALIDATION, useValue: context },
        useCase(CreateLogStream, [UnitOfWork, Clock, STREAM_VALIDATION]),
        useCase(UpdateLogStream, [UnitOfWork, Clock, STREAM_VALIDATION]),
        useCase(PauseLogStream, [UnitOfWork, Clock]),
        useCase(ResumeLogStream, [UnitOfWork, Clock]),
        useCase(DeleteLogStream, [UnitOfWork]),
        useCase(GetLogStream, [LogStreamRepository]),
        useCase(ListLogStreams, [LogStreamRepository]),
      ],
    };
  }
}
