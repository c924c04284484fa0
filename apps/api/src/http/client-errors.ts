import { randomUUID } from 'node:crypto';
import { IncomingMessage, RequestListener, Server, ServerResponse, STATUS_CODES } from 'node:http';
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
// Errors met in the body, once the head was handed to the application.
const BODY_DETAILS: Record<string, string> = {
  HPE_INVALID_CHUNK_SIZE: 'The chunked request body is not valid (a chunk size is not a hexadecimal number)',
};
// RFC 9112 3.2: a request with no Host (HTTP/1.1), more than one, or one that is not a host[:port] is a 400.
const MISSING_HOST = 'An HTTP/1.1 request needs a Host header';
const MANY_HOSTS = 'A request may carry one Host header only';
const BAD_HOST = 'The Host header is not a host name or address with an optional port';
const HOST_VALUE = /^(?:[A-Za-z0-9._~!$&'()*+,;=%-]*|\[[0-9A-Fa-f:.]+\])(?::\d*)?$/;

/**
 * Errors produced before the application sees a request (a malformed or oversized head, a malformed chunked body, an
 * `Expect` other than 100-continue, an HTTP/1.1 request without `Host`) get an `application/problem+json` body like
 * every other error, where the connection still allows an answer: nothing of a response may have been written on it.
 * Call it on the server once its request listener is in place (the Host check goes in front of it).
 */
export function answerClientErrors(server: Server, onRefused?: RefusalListener): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection the client reset, or one whose response has begun, can take no answer.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    // A body that breaks the framing mid-request (a bad chunk size): the application has the head but will never see
    // the rest, and nothing of its response was written: the answer is this one (as Node's own is, without a body);
    // once the socket is ended, whatever the application writes later goes nowhere.
    const status = STATUS_OF_PARSER_ERROR[error.code ?? ''] ?? 400;
    const requestId = randomUUID();
    onRefused?.({ status, code: error.code ?? 'unknown', request_id: requestId });
    const body = JSON.stringify(refusal(status, requestId, BODY_DETAILS[error.code ?? '']));
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
    answer(res, 417, requestId);
    // The body the client held back is not wanted.
    req.resume();
  });

  // Node answers an HTTP/1.1 request without Host with an empty 400 before any listener runs: the check is ours.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const fault = hostFault(req);
    if (fault) {
      const requestId = randomUUID();
      onRefused?.({ status: 400, code: fault.code, request_id: requestId });
      answer(res, 400, requestId, fault.detail);
      req.resume();
      return;
    }
    for (const listener of listeners) listener.call(server, req, res);
  });
}

function hostFault(req: IncomingMessage): { code: string; detail: string } | undefined {
  const host = req.headers.host;
  if (host === undefined) return req.httpVersion === '1.1' ? { code: 'missing_host', detail: MISSING_HOST } : undefined;
  // Node keeps the first of several Host lines: count them in the raw headers.
  let lines = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.length === 4 && req.rawHeaders[i]!.toLowerCase() === 'host') lines++;
  if (lines > 1) return { code: 'many_hosts', detail: MANY_HOSTS };
  return HOST_VALUE.test(host) ? undefined : { code: 'bad_host', detail: BAD_HOST };
}

function answer(res: ServerResponse, status: number, requestId: string, detail?: string): void {
  const body = JSON.stringify(refusal(status, requestId, detail));
  res.writeHead(status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    connection: 'close',
  });
  res.end(body);
}

function refusal(status: number, requestId: string, detail = DETAILS[status]): ProblemDetails {
  return { ...problem(status, detail), instance: requestId };
}
