import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { Detokenize, holdsDetokenizeExpression, Principal, ValidationError } from '@gatehouse/domain';
import { isJsonMediaType } from '@gatehouse/reactor';
import { RequestPrincipal } from '../auth/request-principal';
import { hasBody } from '../http/json-body';
import { forwardableHeaders, HeaderMap } from './forwarded-headers';

/** The request as it goes on after detokenization: its headers, and its body when it was read (undefined: stream it). */
export interface DetokenizedRequest {
  headers: HeaderMap;
  body: Buffer | undefined;
}

const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Bodies whose `{{ ... }}` expressions are detokenized: JSON (parsed) and text; anything else is passed on as it is. */
function isTextual(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  if (!value) return true;
  const media = value.split(';')[0]!.trim().toLowerCase();
  return (
    isJsonMediaType(media) ||
    media.startsWith('text/') ||
    media === 'application/x-www-form-urlencoded' ||
    media === 'application/xml' ||
    media.endsWith('+xml')
  );
}

/**
 * An outbound proxy's detokenization (CONTRACT.md section 12): on a proxy with `require_auth`, the `{{ <token id> }}`
 * expressions of the request's headers and body (JSON and text) become the tokens' data, as the CALLER's `token:use`
 * rules decide, before the request transform runs. The platform has no proxy kind: a proxy that requires a key is
 * called by the tenant's own systems (outbound, whose key decides), one that does not by third parties (inbound: their
 * requests are never detokenized, there being no key to decide with). The Detokenize use case does the work, so the
 * rules, the 400 naming where (never a blank), the limit and the audit logs are those of POST /detokenize. Responses
 * are never detokenized.
 */
@Injectable()
export class ProxyDetokenization {
  constructor(private readonly detokenize: Detokenize) {}

  /**
   * undefined when nothing was read and nothing changes (the request goes on as it came); else the headers to send and
   * the body, read whole (bounded by `readBody`) when it is of a textual type.
   */
  async apply(req: Request, caller: Principal, readBody: () => Promise<Buffer>): Promise<DetokenizedRequest | undefined> {
    const headers = forwardableHeaders(req.headers);
    const expressionHeaders: Record<string, string> = {};
    for (const name in headers) {
      const value = headers[name]!;
      if (typeof value === 'string' && holdsDetokenizeExpression(value)) expressionHeaders[name] = value;
    }
    const textual = hasBody(req) && isTextual(req.headers['content-type']);
    const headerCount = Object.keys(expressionHeaders).length;
    if (!textual && headerCount === 0) return undefined;
    const raw = textual ? await readBody() : undefined;
    const text = raw !== undefined && raw.includes('{{') ? raw.toString('utf8') : undefined;
    const bodyHolds = text !== undefined && holdsDetokenizeExpression(text);
    if (!bodyHolds && headerCount === 0) return { headers, body: raw };

    const json = bodyHolds && isJsonMediaType(req.headers['content-type']) ? parsed(text) : undefined;
    const input: Record<string, unknown> = {};
    if (bodyHolds) input.body = json !== undefined ? json.value : text;
    if (headerCount > 0) input.headers = expressionHeaders;
    const output = (await this.detokenize.execute(new RequestPrincipal(caller, req), input)) as { body?: unknown; headers?: Record<string, unknown> };

    for (const [name, value] of Object.entries(output.headers ?? {})) {
      const line = asText(value);
      if (!FIELD_VALUE.test(line)) throw ValidationError.single(`headers.${name}`, 'names a token whose data cannot be sent in a header');
      headers[name] = line;
    }
    let body = raw;
    if (bodyHolds) {
      body = Buffer.from(json !== undefined ? JSON.stringify(output.body) : asText(output.body), 'utf8');
      headers['content-length'] = String(body.length);
    }
    return { headers, body };
  }
}

/** The JSON of a body declared JSON, or undefined when it does not parse (then its text is detokenized as text). */
function parsed(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** A token's value in text: a string as it is, anything else as JSON. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}
