import { createHash } from 'node:crypto';
import { JobContext } from './job-handler';

/**
 * The id of a queued log that came without one: a name-based UUID (version 8) of the job's identity and
 * the log's place in it, so every retry of the job, on any worker, writes the same row.
 */
export function derivedLogId(context: JobContext, index: number): string {
  const hex = createHash('sha256').update(`${context.queue}\n${context.id}\n${context.timestamp}\n${index}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
