import { Log, LogJson, toLogJson } from '@gatehouse/domain';

/** A streamed log: its public fields, with its chain `position` and `hash`, so the receiver can verify the chain. */
export type StreamRecord = LogJson & { position: number; hash: string };

export function toStreamRecord(log: Log): StreamRecord {
  return { ...toLogJson(log), position: log.position, hash: log.hash };
}
