import type { Response } from 'express';
import type { ProxyErrorBody, TransformResult } from '@gatehouse/reactor';
import { problem, sendProblem } from '../http/problem-details';
import { RATE_LIMIT_FIELDS } from '../rate-limits/rate-limit-headers';
import { HeaderMap, outgoingHeaders } from './forwarded-headers';
import { resultPayloadOf } from './transform-payloads';

/** The destination's (or transform's) headers; RateLimit fields of its own are listed after Gatehouse's policies. */
export function setHeaders(res: Response, headers: HeaderMap): void {
  for (const name in headers) {
    const ours = RATE_LIMIT_FIELDS.has(name.toLowerCase()) ? res.getHeader(name) : undefined;
    res.setHeader(name, ours === undefined ? headers[name]! : `${String(ours)}, ${String(headers[name])}`);
  }
}

/**
 * A transform's error result, sent as the reactor shaped it under the transform contract: a thrown reactor error's
 * proxy_error body, or a CustomHttpResponseError's status, headers and body (JSON unless a string).
 */
export function sendTransformError(res: Response, result: Extract<TransformResult, { ok: false }>): void {
  // The sandbox pool (or this tenant's share of it) is full: the service's own 503, not the transform's.
  if (result.retryAfterSeconds !== undefined) {
    const detail = (result.body as ProxyErrorBody | null)?.proxy_error?.detail || 'No transform sandbox is available';
    return sendProblem(res, problem(503, detail), { 'retry-after': String(result.retryAfterSeconds) });
  }
  const headers = outgoingHeaders(result.headers);
  sendPayload(res, result.status, headers, resultPayloadOf(result, headers));
}

export function sendPayload(res: Response, status: number, headers: HeaderMap, payload: Buffer | undefined): void {
  // 204 and 304 carry no body (RFC 9110), whatever a transform returned with them.
  const bodiless = status === 204 || status === 304;
  if (bodiless) delete headers['content-length'];
  res.statusCode = status;
  setHeaders(res, headers);
  res.end(bodiless ? undefined : payload);
}
