import { DynamicModule, Global, Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  ApplicationExpiryScheduler,
  ApplicationRepository,
  AuditEventPublisher,
  Clock,
  ExpireApplications,
  NoopApplicationExpiryScheduler,
  NoopAuditEventPublisher,
  UnitOfWork,
} from '@gatehouse/domain';

export interface BackgroundJobsOptions {
  /** Run the periodic jobs in this process (the worker, or the API when there is no Redis). */
  runJobs: boolean;
  expirySweepIntervalMs?: number;
}

const OPTIONS = Symbol('BACKGROUND_JOBS_OPTIONS');

@Injectable()
class ExpirySweep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ExpirySweep');
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly expire: ExpireApplications,
    @Inject(OPTIONS) private readonly options: BackgroundJobsOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.runJobs) return;
    const tick = () => {
      if (this.running) return;
      this.running = this.expire
        .sweep()
        .then((n) => n > 0 && this.logger.log(`expired ${n} application(s)`))
        .catch((error) => this.logger.error(`expiry sweep failed: ${String(error)}`))
        .finally(() => (this.running = undefined));
    };
    tick();
    this.timer = setInterval(tick, this.options.expirySweepIntervalMs ?? 15_000);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

/** Audit publishing, expiry scheduling and the periodic jobs, shared by the api and the worker. */
@Global()
@Module({})
export class BackgroundJobsModule {
  static forRoot(options: BackgroundJobsOptions): DynamicModule {
    return {
      module: BackgroundJobsModule,
      providers: [
        { provide: OPTIONS, useValue: options },
        { provide: AuditEventPublisher, useClass: NoopAuditEventPublisher },
        { provide: ApplicationExpiryScheduler, useClass: NoopApplicationExpiryScheduler },
        {
          provide: ExpireApplications,
          inject: [UnitOfWork, ApplicationRepository, Clock],
          useFactory: (uow: UnitOfWork, apps: ApplicationRepository, clock: Clock) => new ExpireApplications(uow, apps, clock),
        },
        ExpirySweep,
      ],
      exports: [AuditEventPublisher, ApplicationExpiryScheduler, ExpireApplications],
    };
  }
}
