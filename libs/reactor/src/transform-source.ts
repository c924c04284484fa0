import { createHash } from 'node:crypto';
import { ReactorCompileError } from './transform-errors';

/** What JavaScript counts as a line break (for line and column numbers). */
const LINE_BREAKS = /\r\n|\r|\n|\u2028|\u2029/;

/** The name tenant code carries in stack traces and compile errors; never a host path. */
export const TRANSFORM_FILENAME = 'transform.js';

// The prefix sits on its own line and the script origin is shifted by one line, so V8 reports
// positions in the tenant's own numbering.
// The inner parentheses make V8 word errors as it would for a plain module ("Unexpected token '}'"
// for a stray brace rather than "missing ) after argument list").
const WRAPPER_PREFIX = '__gatehouse_load((function (module, exports, require) {\n';
const WRAPPER_SUFFIX = '\n}));';
export const WRAPPER_LINE_OFFSET = -1;

/** CommonJS wrapper whose evaluation hands the module factory to the sandbox loader. */
export function wrapTransformSource(code: string): string {
  return WRAPPER_PREFIX + code + WRAPPER_SUFFIX;
}

export function transformCodeHash(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

export function codeTooLongError(code: string, maxLength: number): ReactorCompileError {
  const { line, column } = positionOf(code, maxLength);
  return new ReactorCompileError(`Transform code is ${code.length} characters long; the limit is ${maxLength} (line ${line}, column ${column})`, line, column);
}

/**
 * isolated-vm reports a compile failure as e.g. "Unexpected token '}' [transform.js:3:5]" on an
 * error whose name is the V8 error type; turn it into a ReactorCompileError in the tenant's numbering.
 */
export function compileErrorFrom(error: unknown, code: string): ReactorCompileError {
  const name = error instanceof Error && error.name ? error.name : 'SyntaxError';
  const raw = error instanceof Error ? error.message : String(error);
  // A location in any other file (e.g. "<isolated-vm>:0:0" for a parser stack overflow) is dropped.
  const match = /^([\s\S]*?)\s*\[([^\]]*):(-?\d+):(-?\d+)\]\s*$/.exec(raw);
  const located = match !== null && match[2] === TRANSFORM_FILENAME;
  let message = (match ? match[1] : raw).replace(/\s+/g, ' ').trim();
  if (message.startsWith(`${name}: `)) message = message.slice(name.length + 2);
  let line = located ? Number(match[3]) : 1;
  let column = located ? Number(match[4]) : 1;
  // An error on the wrapper's closing line means the code ended inside an unclosed construct.
  const lines = code.split(LINE_BREAKS);
  if (line > lines.length) {
    message = 'Unexpected end of input';
    line = lines.length;
    column = lines[lines.length - 1].length + 1;
  }
  if (line < 1) {
    line = 1;
    column = 1;
  }
  if (column < 1) column = 1;
  return new ReactorCompileError(`${name}: ${message} (line ${line}, column ${column})`, line, column);
}

/** An error found without a position (by the wrapper-escape check), reported at the start. */
export function compileErrorWithoutPosition(message: string): ReactorCompileError {
  return new ReactorCompileError(`${message} (line 1, column 1)`, 1, 1);
}

function positionOf(code: string, index: number): { line: number; column: number } {
  const before = code.slice(0, index).split(LINE_BREAKS);
  return { line: before.length, column: before[before.length - 1].length + 1 };
}
