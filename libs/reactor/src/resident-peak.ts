import { closeSync, openSync, writeSync } from 'node:fs';

/**
 * The sandbox process's resident-set high-water mark over one run, less the windows the runtime's own
 * work is excluded from (compiling and evaluating a bundled package: the parser's memory is the
 * runtime's, not the transform's). Linux resets the mark when '5' is written to /proc/self/clear_refs,
 * and getrusage's ru_maxrss then reports the peak since that reset (cost: docs/benchmarks/history.md). Where the file
 * cannot be written (not Linux, a /proc mounted read-only), there is no reading and the heap check
 * after the run is the only one.
 */
export class ResidentPeak {
  private fd: number | null;
  /** The resident set when the current window opened, in bytes; null when not measuring. */
  private base: number | null = null;
  /** The most the resident set grew by in the windows already closed. */
  private grownBefore = 0;

  constructor() {
    try {
      this.fd = openSync('/proc/self/clear_refs', 'w');
    } catch {
      this.fd = null;
    }
  }

  /** Starts measuring one run. */
  start(): void {
    this.grownBefore = 0;
    this.base = this.reset();
  }

  /** Closes the current window (the runtime's own work starts). */
  pause(): void {
    if (this.base !== null) this.grownBefore = Math.max(this.grownBefore, this.peak() - this.base);
  }

  /** Opens a new window from the resident set now. */
  resume(): void {
    if (this.base !== null) this.base = this.reset();
  }

  /** The most the resident set grew by during the run, in bytes; null when it cannot be measured. */
  grown(): number | null {
    if (this.base === null) return null;
    return Math.max(this.grownBefore, this.peak() - this.base);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.base = null;
  }

  private reset(): number | null {
    if (this.fd === null) return null;
    try {
      writeSync(this.fd, '5');
    } catch {
      this.close();
      return null;
    }
    return this.peak();
  }

  private peak(): number {
    return process.resourceUsage().maxRSS * 1024;
  }
}
