import { randomUUID } from 'node:crypto';
import { IncomingMessage, Server, ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { problem, ProblemDetails } from './problem-details';

/** What the service logs of a request refused before the application saw it (never the request itself). */
export type RefusalListener = (refusal: { status: number; code: string; request_id: string }) => void;

// Node's own answers to these carry no body (socketOnError in lib/_http_server.js); the statuses are the same.
const STATUS_OF_PARSER_ERROR: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

const DETAILS: Record<number, string> = {
  400: 'The request is not valid HTTP/1.1',
  408: 'The request did not arrive in time',
  413: 'The chunk extensions of the request body are too large',
  417: 'The only expectation supported is 100-continue',
  431: 'The request head (request line and headers) is too large',
};

/**
 * Errors produced before the application sees a request (a malformed or oversized head, an `Expect` other than
 * 100-continue) get an `application/problem+json` body like every other error, where the connection still allows an
 * answer: nothing of another response may have been written on it.
 */
export function answerClientErrors(server: Server, onRefused?: RefusalListener): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection the client reset, or one in the middle of another response, can take no answer.
    const inProgress = (socket as Duplex & { _httpMessage?: unknown })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inProgress) {
      socket.destroy();
      return;
    }
    const status = STATUS_OF_PARSER_ERROR[error.code ?? ''] ?? 400;
    const requestId = randomUUID();
    onRefused?.({ status, code: error.code ?? 'unknown', request_id: requestId });
    const body = JSON.stringify(refusal(status, requestId));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    // The client may never read the answer: do not keep the socket for it.
    setTimeout(() => socket.destroy(), 5_000).unref();
  });

  // With a listener, Node leaves the 417 to it (and its body to us); without one it answers with no body.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const requestId = randomUUID();
    onRefused?.({ status: 417, code: 'expectation_failed', request_id: requestId });
    const body = JSON.stringify(refusal(417, requestId));
    res.writeHead(417, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body), 'x-request-id': requestId, connection: 'close' });
    res.end(body);
    // The body the client held back is not wanted.
    req.resume();
  });
}

function refusal(status: number, requestId: string): ProblemDetails {
  return { ...problem(status, DETAILS[status]), instance: requestId };
}
