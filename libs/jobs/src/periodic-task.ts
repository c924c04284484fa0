import { Logger } from '@nestjs/common';

/** Runs `work` now and then every `intervalMs`, never two runs at once; errors are logged, never thrown. */
export class PeriodicTask {
  private readonly logger: Logger;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<number>,
    private readonly describe: (n: number) => string,
  ) {
    this.logger = new Logger(name);
  }

  start(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One run now (or the one in progress): for tests and for shutdown. */
  runOnce(): Promise<void> {
    return this.tick();
  }

  private tick(): Promise<void> {
    this.running ??= this.work()
      .then((n) => {
        if (n > 0) this.logger.log(this.describe(n));
      })
      .catch((error: unknown) => this.logger.error(`${this.name} failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => (this.running = undefined));
    return this.running;
  }
}
