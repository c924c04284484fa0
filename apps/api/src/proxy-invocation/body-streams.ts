import { Readable, Transform, TransformCallback } from 'node:stream';
import type { Request } from 'express';

/**
 * A body that has already arrived whole (the usual case for small bodies, which come with their headers) as one
 * buffer, so it leaves in the same write as the request head; undefined while bytes are still on their way.
 */
export function arrivedBody(req: Request): Buffer | undefined {
  const declared = req.headers['content-length'];
  if (declared === undefined || req.readableLength === 0 || req.readableLength !== Number(declared)) return undefined;
  const body = req.read() as Buffer | null;
  // Nothing is left to read; let the stream run to its end so the server sees the request consumed.
  req.resume();
  return body ?? undefined;
}

/**
 * A whole body, refused beyond `limit` bytes. Event-driven rather than `for await`, whose iterator costs
 * several promises per chunk on the data plane's hot path.
 */
export function readBounded(stream: Readable, limit: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      stream.off('data', onData);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        fail(tooLarge());
        stream.destroy();
        return;
      }
      chunks.push(chunk);
    };
    stream.on('data', onData);
    stream.once('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    });
    stream.once('error', fail);
    // Closed before its end (the peer went away): the body is incomplete.
    stream.once('close', () => {
      if (!settled) fail(new Error('The body ended before it was complete'));
    });
  });
}

/**
 * The request body streamed to the destination. A declared content-length is enforced by Node's parser
 * (and checked against the limit already); a chunked body is counted on the way through.
 */
export function limitedStream(req: Request, limit: number, tooLarge: () => Error): Readable {
  if (req.headers['content-length'] !== undefined) return req;
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > limit) callback(tooLarge());
      else callback(null, chunk);
    },
  });
  req.pipe(counter);
  req.once('error', (error) => counter.destroy(error));
  return counter;
}
