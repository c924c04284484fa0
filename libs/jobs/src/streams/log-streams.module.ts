import { DynamicModule, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock, DEFAULT_LOG_STREAM_DELIVERY, DeliverLogStreams, LogStreamDeliveryOptions, LogStreamRepository } from '@gatehouse/domain';
import { PeriodicTask } from '../periodic-task';
import { KindLogStreamTransport } from './log-stream-transport';
import { StreamOutboundGuard } from './outbound';

export interface LogStreamsOptions {
  guard: StreamOutboundGuard;
  /** How often due streams are looked for (LOG_STREAM_INTERVAL_MS). */
  intervalMs: number;
  delivery?: Partial<LogStreamDeliveryOptions>;
  /** One batch's time limit (default 30 s). */
  timeoutMs?: number;
}

const LOG_STREAM_DELIVERY_TASK = Symbol('LOG_STREAM_DELIVERY_TASK');

/** Starts the delivery task with the app; when the app stops, lets its run in progress finish and closes its connections. */
@Injectable()
export class LogStreamDeliveryTask implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(LOG_STREAM_DELIVERY_TASK) readonly task: PeriodicTask,
    private readonly deliver: DeliverLogStreams,
  ) {}

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
    this.deliver.close();
  }
}

/**
 * Log stream delivery, where background jobs run (the worker, or the api without Redis): its own periodic task,
 * leasing streams in PostgreSQL, so any number of workers share them and never deliver one stream twice at once.
 */
@Module({})
export class LogStreamsModule {
  static forRoot(options: LogStreamsOptions): DynamicModule {
    return {
      module: LogStreamsModule,
      providers: [
        {
          provide: DeliverLogStreams,
          inject: [LogStreamRepository, Clock],
          useFactory: (repo: LogStreamRepository, clock: Clock) =>
            new DeliverLogStreams(repo, new KindLogStreamTransport({ guard: options.guard, timeoutMs: options.timeoutMs ?? 30_000 }), clock, {
              ...DEFAULT_LOG_STREAM_DELIVERY,
              ...options.delivery,
            }),
        },
        {
          provide: LOG_STREAM_DELIVERY_TASK,
          inject: [DeliverLogStreams],
          useFactory: (deliver: DeliverLogStreams) =>
            new PeriodicTask(
              'LogStreams',
              options.intervalMs,
              () => deliver.execute(),
              (n) => `streamed ${n} log(s)`,
            ),
        },
        LogStreamDeliveryTask,
      ],
      exports: [DeliverLogStreams, LogStreamDeliveryTask],
    };
  }
}
