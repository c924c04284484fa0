import type { Response } from 'express';

/**
 * A JSON response body serialised once, for a value that never changes (the response of a frozen cache entry, see
 * applicationJson): the text, and what express would derive from it on every request (the chunk it writes, its
 * Content-Length).
 */
export class PreparedJson {
  /** What express's res.json would serialise (its default settings: no replacer, spaces or escaping). */
  readonly text: string;
  /** What res.send writes: the text below 1000 characters, else its UTF-8 bytes (res.send's own threshold). */
  readonly chunk: string | Buffer;
  /** Content-Length as res.send sets it (a string). */
  readonly contentLength: string;

  constructor(readonly value: object) {
    this.text = JSON.stringify(value);
    this.chunk = this.text.length < 1000 ? this.text : Buffer.from(this.text, 'utf8');
    this.contentLength = String(typeof this.chunk === 'string' ? Buffer.byteLength(this.chunk, 'utf8') : this.chunk.length);
  }
}

const CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Answers with `body` exactly as `res.json(body.value)` would (same status, same headers in the same order, same
 * bytes: `Content-Type: application/json; charset=utf-8`, then `Content-Length`), without serialising the value or
 * working out those headers again. Whenever express could answer differently from that plain case (a HEAD or a
 * conditional request, a status or Content-Type already set, an ETag, JSON or ETag settings changed from this API's),
 * it is res.json itself that answers.
 */
export function sendPreparedJson(res: Response, body: PreparedJson): void {
  if (!plainJsonAnswer(res)) {
    res.json(body.value);
    return;
  }
  res.setHeader('Content-Type', CONTENT_TYPE);
  res.setHeader('Content-Length', body.contentLength);
  if (typeof body.chunk === 'string') res.end(body.chunk, 'utf8');
  else res.end(body.chunk);
}

/** Whether res.json would send a 200 with a body and no header beyond Content-Type and Content-Length. */
function plainJsonAnswer(res: Response): boolean {
  const req = res.req;
  const app = res.app;
  return (
    req.method === 'GET' &&
    res.statusCode === 200 &&
    // req.fresh (a 304) can only be true with one of these.
    req.headers['if-none-match'] === undefined &&
    req.headers['if-modified-since'] === undefined &&
    !res.hasHeader('content-type') &&
    !res.hasHeader('transfer-encoding') &&
    !res.hasHeader('etag') &&
    !app.get('etag fn') &&
    !app.get('json replacer') &&
    !app.get('json spaces') &&
    !app.get('json escape')
  );
}
