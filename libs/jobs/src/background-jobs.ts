import { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { BullmqJobConsumer } from './bullmq/bullmq-job-consumer';
import { BullmqJobQueue } from './bullmq/bullmq-job-queue';
import { InProcessJobQueue } from './in-process/in-process-job-queue';
import { JobHandlerRegistry } from './job-handler';
import { LogBatchWriter } from './log-batch-writer';
import { PeriodicTask } from './periodic-task';
import { QueuedApplicationExpiryScheduler } from './queued-application-expiry-scheduler';
import { QueuedAuditEventPublisher } from './queued-audit-event-publisher';

export interface BackgroundJobParts {
  bullmq?: BullmqJobQueue;
  inProcess?: InProcessJobQueue;
  publisher?: QueuedAuditEventPublisher;
  scheduler?: QueuedApplicationExpiryScheduler;
  /** Present where jobs run (the worker, or the api without Redis). */
  runner?: {
    registry: JobHandlerRegistry;
    writer: LogBatchWriter;
    consumer?: BullmqJobConsumer;
    outboxRelay: PeriodicTask;
    checkpoints: PeriodicTask;
    expirySweep: PeriodicTask;
    /** Tokens past their expires_at, deleted in bounded batches (ExpireTokens). */
    tokenExpirySweep: PeriodicTask;
    /** The logs' time partitions of now and the next intervals, created ahead (MaintainLogPartitions). */
    logPartitions: PeriodicTask;
    /** Logs older than their tenant's retention period, removed in bounded batches behind signed anchors. */
    logRetention: PeriodicTask;
  };
}

/** Starts the consumers and periodic jobs once the app is up, and stops everything in an order that loses nothing. */
export class BackgroundJobs implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(readonly parts: BackgroundJobParts) {}

  onApplicationBootstrap(): void {
    const runner = this.parts.runner;
    if (!runner) return;
    this.parts.inProcess?.start(runner.registry);
    runner.consumer?.start();
    // Both run at once on start too: this is what covers a restart (events of a crash, lost expiry timers).
    runner.logPartitions.start();
    runner.outboxRelay.start();
    runner.checkpoints.start();
    runner.expirySweep.start();
    runner.tokenExpirySweep.start();
    runner.logRetention.start();
  }

  /** The partitions, the relay, the checkpoints and the sweep, now: for tests and operators' scripts. */
  async runMaintenance(): Promise<void> {
    await this.parts.runner?.logPartitions.runOnce();
    await this.parts.runner?.outboxRelay.runOnce();
    await this.parts.runner?.checkpoints.runOnce();
    await this.parts.runner?.expirySweep.runOnce();
    await this.parts.runner?.tokenExpirySweep.runOnce();
  }

  async onApplicationShutdown(): Promise<void> {
    const { bullmq, inProcess, publisher, scheduler, runner } = this.parts;
    await runner?.outboxRelay.stop();
    await runner?.expirySweep.stop();
    await runner?.tokenExpirySweep.stop();
    await runner?.logPartitions.stop();
    await runner?.logRetention.stop();
    // Running jobs finish first: their logs commit and the events of their own writes get published.
    await runner?.consumer?.close();
    await scheduler?.close();
    await publisher?.close();
    await inProcess?.close();
    await runner?.writer.close();
    // Last: the logs written while stopping get their checkpoint too.
    await runner?.checkpoints.stop();
    await runner?.checkpoints.runOnce();
    await bullmq?.close();
  }
}
