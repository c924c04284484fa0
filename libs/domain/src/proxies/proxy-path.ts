import { DomainError } from '../shared/domain-error';

/** A `<more path>` that could leave the path of a proxy's `destination_url`: a 400, never forwarded. */
export class PathEscapeError extends DomainError {
  constructor(reason: string) {
    super('validation', `The proxy path ${reason}`);
  }
}

// Each layer of percent-encoding a destination (or something in front of it) might peel off is checked; a path still
// encoded after this many layers is refused rather than trusted.
const MAX_DECODING_LAYERS = 4;
const ENCODED_BYTE = /%[0-9A-Fa-f]{2}/;
const PERCENT_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
// Only dots, with spaces, tabs or nothing around them: `.`, `..`, and the `...` and `.. ` that Windows servers trim to them.
const DOTS_ONLY = /^[\s.]*\.[\s.]*$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
// Raw bytes outside visible ASCII must have been percent-encoded (RFC 3986), and IIS-style %uXXXX is no encoding at
// all: some servers would still decode either into a dot or a slash.
const NOT_URI_CHARACTER = /[^\u0021-\u007e]/;
const PERCENT_U = /%u[0-9A-Fa-f]{4}/;
// Where a decoded segment may end for a server that decodes before it parses: a `;` parameter, or the query or the
// fragment an encoded `?` or `#` starts once decoded.
const SEGMENT_END = /[;?#]/;
// The usual path: segments of letters, digits and `-._~` (RFC 3986's unreserved characters), none empty or of dots
// only. Nothing in it decodes, normalises or trims to anything else, so none of the checks below can refuse it.
const PLAIN_PATH = /^(?:\/(?!\.*(?:\/|$))[A-Za-z0-9._~-]+)+$/;

/**
 * Why `path` (the raw `<more path>`, '' or starting with '/') could reach outside the destination's path, or
 * undefined when it cannot. Every segment is checked in its raw form, in each form that percent-decoding it again
 * and again gives (so `%252e%252e` counts as `..`), and in the Unicode compatibility form of each (fullwidth `．．`
 * and `／` are what some servers fold them to). A segment is refused when it is a dot segment (also before a `;`
 * parameter, which some servers strip: `..;x`, and before a `?` or `#` that was encoded: `..%3Fx` is `..` and a query
 * to a server that decodes the path before it splits off the query), holds a backslash or a slash that was encoded, a control character,
 * bytes that are not UTF-8 (overlong `%c0%ae` is a dot to some decoders), or anything not percent-encoded that should be.
 */
export function pathEscape(path: string): string | undefined {
  if (path === '' || PLAIN_PATH.test(path)) return undefined;
  if (!path.startsWith('/')) return 'must start with /';
  if (NOT_URI_CHARACTER.test(path)) return 'must be validly percent-encoded UTF-8';
  for (const segment of path.slice(1).split('/')) {
    const forms = decodedForms(segment);
    if (forms === undefined || forms.some((form) => PERCENT_U.test(form))) return 'must be validly percent-encoded UTF-8';
    for (const form of forms) {
      for (const candidate of form === form.normalize('NFKC') ? [form] : [form, form.normalize('NFKC')]) {
        if (DOTS_ONLY.test(candidate.split(SEGMENT_END, 1)[0]!)) return "must not contain '.' or '..' segments, encoded or not";
        if (candidate.includes('\\')) return 'must not contain backslashes, encoded or not';
        if (candidate.includes('/')) return 'must not contain encoded slashes';
        if (CONTROL.test(candidate)) return 'must not contain control characters';
      }
    }
  }
  return undefined;
}

/** Throws PathEscapeError when `path` could leave the destination's path (see pathEscape). */
export function requireContainedPath(path: string): void {
  const reason = pathEscape(path);
  if (reason !== undefined) throw new PathEscapeError(reason);
}

/** The segment, then each further percent-decoding of it until nothing is left to decode; undefined when one fails. */
function decodedForms(segment: string): string[] | undefined {
  const forms = [segment];
  let current = segment;
  for (let layer = 0; ENCODED_BYTE.test(current); layer++) {
    if (layer === MAX_DECODING_LAYERS) return undefined;
    const decoded = decodeLayer(current);
    if (decoded === undefined) return undefined;
    forms.push(decoded);
    current = decoded;
  }
  return forms;
}

/** One layer of percent-decoding: each run of %XX must be UTF-8; a `%` not followed by two hex digits stays as it is. */
function decodeLayer(text: string): string | undefined {
  let failed = false;
  const decoded = text.replace(PERCENT_RUN, (run) => {
    const bytes = Uint8Array.from(run.slice(1).split('%'), (hex) => parseInt(hex, 16));
    try {
      return STRICT_UTF8.decode(bytes);
    } catch {
      failed = true;
      return run;
    }
  });
  return failed ? undefined : decoded;
}
