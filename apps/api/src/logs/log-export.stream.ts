import { once } from 'node:events';
import type { Response } from 'express';
import { Log, LOG_JSON_FIELDS, LogExport, LogExportFormat } from '@gatehouse/domain';
import { csvCell } from './csv-cell';
import { LogResponse, toLogResponse } from './logs.dto';

const CSV_COLUMNS: (keyof LogResponse)[] = ['position', ...LOG_JSON_FIELDS, 'hash'];

/**
 * Writes an export to the response a slice at a time, waiting for the socket to drain between slices (memory stays
 * flat however slow the client), and stops reading the database as soon as the client goes away. An error before
 * the first byte becomes the usual ProblemDetails; after it, the connection is cut so the client sees a truncated
 * download rather than a clean end.
 */
export async function streamLogExport(res: Response, exported: LogExport, format: LogExportFormat): Promise<void> {
  let gone = false;
  const onClose = () => (gone = true);
  res.on('close', onClose);
  res.status(200);
  res.setHeader('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
  res.setHeader('content-disposition', `attachment; filename="logs.${format}"`);
  // Where the export ends in the chain: a checkpoint at or before this position verifies it.
  res.setHeader('x-chain-position', String(exported.upToPosition));
  const slices = exported.slices[Symbol.asyncIterator]();
  try {
    if (format === 'csv') res.write(`${CSV_COLUMNS.join(',')}\r\n`);
    while (!gone) {
      const next = await slices.next();
      if (next.done || gone) break;
      if (!res.write(format === 'csv' ? csvLines(next.value) : ndjsonLines(next.value))) {
        await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
    }
    if (!gone) res.end();
  } catch (error) {
    if (!res.headersSent) throw error;
    res.destroy(error instanceof Error ? error : new Error(String(error)));
  } finally {
    res.off('close', onClose);
    await slices.return?.();
  }
}

function ndjsonLines(logs: Log[]): string {
  let out = '';
  for (const log of logs) out += `${JSON.stringify(toLogResponse(log))}\n`;
  return out;
}

function csvLines(logs: Log[]): string {
  let out = '';
  for (const log of logs) {
    const row = toLogResponse(log);
    out += `${CSV_COLUMNS.map((c) => csvCell(row[c])).join(',')}\r\n`;
  }
  return out;
}
