import pino, { Logger } from 'pino';
import { createJsonRootLogger } from '@gatehouse/runtime';
import { currentRequestId } from './request-context';

// The JSON logger is shared with the worker in @gatehouse/runtime; the api adds the request id.
export { JsonLogger } from '@gatehouse/runtime';

/** One JSON object per line on stdout, each carrying the request id of the request it belongs to. */
export function createRootLogger(level: string, destination?: pino.DestinationStream): Logger {
  return createJsonRootLogger(level, destination, () => {
    const requestId = currentRequestId();
    return requestId ? { request_id: requestId } : {};
  });
}
