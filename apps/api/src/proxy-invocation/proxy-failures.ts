import type { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DestinationRefusedError } from '@gatehouse/reactor';
import { accessRecord, noteFailure } from '../http/access-log';
import { problem, ProblemDetailsFilter, sendProblem } from '../http/problem-details';

/** The request body is over BODY_LIMIT_BYTES. */
export class PayloadTooLargeError extends Error {}

/** The destination's body is over the limit a response transform may be given. */
export class ResponseTooLargeError extends Error {}

/** A failure to exchange with the destination (as opposed to a fault of this service). */
export class DestinationError extends Error {
  constructor(cause: unknown) {
    super('destination exchange failed', { cause });
  }
}

/**
 * What a failed `/proxy` request answers: 413 for a body over the limit, 502 for a destination refused, unreachable
 * or answering too much for a transform, 504 when it did not answer in time, 400 for a body that ended early; the
 * domain's errors (404, 401, 403, 429) as everywhere else, and anything unexpected a logged 500.
 */
export class ProxyFailures {
  private readonly problems = new ProblemDetailsFilter();

  constructor(
    private readonly logger: Logger,
    private readonly limits: { bodyLimitBytes: number; destinationTimeoutMs: number },
  ) {}

  send(req: Request, res: Response, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    noteFailure(req, error);
    const record = accessRecord(req);
    const chain = causes(error);
    if (chain.some((e) => e instanceof PayloadTooLargeError)) {
      // The rest of the body is not read: close the connection rather than drain it.
      return sendProblem(res, problem(413, `The request body exceeds ${this.limits.bodyLimitBytes} bytes`), { connection: 'close' });
    }
    if (error instanceof ResponseTooLargeError) {
      return sendProblem(res, problem(502, `The destination's response exceeds ${this.limits.bodyLimitBytes} bytes, too large for the response transform`));
    }
    if (error instanceof DestinationError) {
      const refused = chain.find((e) => e instanceof DestinationRefusedError);
      if (refused) {
        record.error = 'destination_refused';
        return sendProblem(res, problem(502, (refused as Error).message));
      }
      const code = chain.map((e) => (e as { code?: unknown })?.code).find((c) => typeof c === 'string');
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
        record.error = 'destination_timeout';
        return sendProblem(res, problem(504, `The destination did not answer within ${this.limits.destinationTimeoutMs} ms`));
      }
      // The caller's body ended early: not merely read to its end (a request read whole is destroyed too, and a
      // destination that then drops the connection is the destination's failure).
      if (code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH' || (req.destroyed && !req.complete)) {
        return sendProblem(res, problem(400, 'The request body ended before its declared length'), { connection: 'close' });
      }
      record.error = 'destination_unreachable';
      this.logger.debug(`destination unreachable: ${code ?? String(chain[chain.length - 1])}`);
      return sendProblem(res, problem(502, 'The destination could not be reached'));
    }
    this.problems.send(res, error);
  }
}

/** The error and its causes, outermost first. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && chain.length < 8; current = (current as { cause?: unknown })?.cause) {
    chain.push(current);
    if (!(current instanceof Error)) break;
  }
  return chain;
}
