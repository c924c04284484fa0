import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { LastUseRecorder } from '@gatehouse/domain';

/** How often touched applications are written; each is written at most once a minute anyway. */
export const LAST_USE_FLUSH_MS = 15_000;

/** Writes `last_used_at` in the background, off every request's path, and once more when the app stops. */
@Injectable()
export class LastUseFlusher implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('LastUse');
  private timer?: NodeJS.Timeout;

  constructor(private readonly recorder: LastUseRecorder) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), LAST_USE_FLUSH_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async flush(): Promise<void> {
    try {
      await this.recorder.flush();
    } catch (error) {
      // Kept for the next flush: a database outage delays last_used_at, it never fails a request.
      this.logger.warn(`last_used_at not written yet: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
