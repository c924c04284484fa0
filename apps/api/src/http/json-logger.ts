import pino, { Logger } from 'pino';
import { createJsonRootLogger } from '@gatehouse/queue';
import { currentRequestId } from './request-context';

// The JSON logger lives beside the worker's bootstrap in @gatehouse/queue; the api adds the request id.
export { JsonLogger } from '@gatehouse/queue';

/** One JSON object per line on stdout, each carrying the request id of the request it belongs to. */
export function createRootLogger(level: string, destination?: pino.DestinationStream): Logger {
  return createJsonRootLogger(level, destination, () => {
    const requestId = currentRequestId();
    return requestId ? { request_id: requestId } : {};
  });
}
