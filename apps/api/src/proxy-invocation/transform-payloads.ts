import { isJsonMediaType, type TransformPayload } from '@gatehouse/reactor';
import { HeaderMap } from './forwarded-headers';

/**
 * A body for a transform as it arrived (TransformInput.rawBody), not parsed here: the sandbox makes of it what the
 * transform contract says (transformBodyOf: the parsed JSON for a JSON content type when it parses, else the text).
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
