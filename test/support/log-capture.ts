import type { Logger } from 'pino';
import { createRootLogger } from '@gatehouse/api';
import { JsonLogger } from '@gatehouse/runtime';

/** The service's JSON logger writing into memory, as `main` builds it (same fields, same Nest adapter). */
export interface CapturedLog {
  root: Logger;
  nest: JsonLogger;
  /** Every line written so far, raw. */
  text: () => string;
  /** Every line written so far, parsed. */
  lines: () => Array<Record<string, any>>;
  clear: () => void;
}

export function captureLog(level: string): CapturedLog {
  let written = '';
  const root = createRootLogger(level, { write: (chunk: string) => void (written += chunk) });
  return {
    root,
    nest: new JsonLogger(root),
    text: () => written,
    lines: () =>
      written
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, any>),
    clear: () => void (written = ''),
  };
}
