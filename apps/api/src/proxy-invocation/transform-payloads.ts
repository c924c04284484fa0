import type { TransformPayload } from '@gatehouse/reactor';
import { HeaderMap } from './forwarded-headers';

export function isJsonMediaType(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  if (!value) return false;
  const media = value.split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

/** What a transform sees as `args.body`: parsed JSON for a JSON content type, else the text; null when empty. */
export function transformBodyOf(raw: Buffer, contentType: string | string[] | undefined): unknown {
  if (raw.length === 0) return null;
  const text = raw.toString('utf8');
  if (!isJsonMediaType(contentType)) return text;
  try {
    return JSON.parse(text);
  } catch {
    // Declared JSON that is not: the transform gets the text and decides.
    return text;
  }
}

/**
 * A body for a transform as it arrived (TransformInput.rawBody), not parsed here: the sandbox makes of it what
 * transformBodyOf would (the parsed JSON for a JSON content type when it parses, else the text; null when empty).
 */
export function rawBodyOf(raw: Buffer, contentType: string | string[] | undefined): TransformPayload {
  return { text: raw.length === 0 ? '' : raw.toString('utf8'), json: isJsonMediaType(contentType) };
}

/**
 * The bytes of a body a transform returned, as payloadOf, from the text the sandbox serialised when there is
 * one (TransformResult.payload), else from the body.
 */
export function resultPayloadOf(result: { body: unknown; payload?: TransformPayload }, headers: HeaderMap): Buffer | undefined {
  const raw = result.payload;
  if (raw === undefined) return payloadOf(result.body, headers);
  if (raw.json) headers['content-type'] ??= 'application/json';
  const payload = Buffer.from(raw.text, 'utf8');
  headers['content-length'] = String(payload.length);
  return payload;
}

/**
 * The bytes of a body a transform returned: a string as it is, null or undefined as no body, anything else
 * as JSON (then `content-type: application/json` unless the transform set one). Sets content-length to match.
 */
export function payloadOf(body: unknown, headers: HeaderMap): Buffer | undefined {
  if (body === undefined || body === null) {
    delete headers['content-length'];
    return undefined;
  }
  let payload: Buffer;
  if (typeof body === 'string') payload = Buffer.from(body, 'utf8');
  else {
    headers['content-type'] ??= 'application/json';
    payload = Buffer.from(JSON.stringify(body), 'utf8');
  }
  headers['content-length'] = String(payload.length);
  return payload;
}
