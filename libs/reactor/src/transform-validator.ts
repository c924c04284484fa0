import ivm from 'isolated-vm';
import {
  codeTooLongError,
  compileErrorFrom,
  compileErrorWithoutPosition,
  TRANSFORM_FILENAME,
  WRAPPER_LINE_OFFSET,
  wrapTransformSource,
} from './transform-source';

// Parsing only: the Function constructor builds the function without calling it.
const CHECKER_SOURCE = `(function checkSource(code) {
  'use strict';
  try { new Function('module', 'exports', 'require', code); return null; }
  catch (e) { return String(e && e.name) + ': ' + String(e && e.message); }
})`;

/**
 * Compile-time validation in a small isolate of its own, so a proxy create/update never touches the
 * pool serving invocations. Nothing is executed: the wrapped code is compiled (which yields V8's line
 * and column), and parsed once more by the Function constructor, which rejects code that closes
 * the CommonJS wrapper early to run outside it.
 */
export class TransformValidator {
  private isolate: ivm.Isolate | null = null;
  private checker: ivm.Reference<(code: string) => string | null> | null = null;

  constructor(private readonly maxCodeLength: number) {}

  validate(code: string): void {
    if (typeof code !== 'string') throw compileErrorWithoutPosition('Transform code must be a string');
    if (code.length > this.maxCodeLength) throw codeTooLongError(code, this.maxCodeLength);
    const { isolate, checker } = this.ensureIsolate();
    try {
      isolate.compileScriptSync(wrapTransformSource(code), { filename: TRANSFORM_FILENAME, lineOffset: WRAPPER_LINE_OFFSET }).release();
    } catch (error) {
      this.resetIfBroken();
      throw compileErrorFrom(error, code);
    }
    let problem: string | null;
    try {
      problem = checker.applySync(undefined, [code], { timeout: 2000, result: { copy: true } });
    } catch {
      this.resetIfBroken();
      problem = 'SyntaxError: The code could not be parsed';
    }
    if (problem === null) return;
    // The code escapes the wrapper; compiled on its own it usually shows where.
    try {
      isolate.compileScriptSync(code, { filename: TRANSFORM_FILENAME }).release();
    } catch (error) {
      throw compileErrorFrom(error, code);
    }
    throw compileErrorWithoutPosition(problem);
  }

  dispose(): void {
    if (this.isolate && !this.isolate.isDisposed) this.isolate.dispose();
    this.isolate = null;
    this.checker = null;
  }

  private ensureIsolate(): { isolate: ivm.Isolate; checker: ivm.Reference<(code: string) => string | null> } {
    if (!this.isolate || this.isolate.isDisposed || !this.checker) {
      this.isolate = new ivm.Isolate({ memoryLimit: 32 });
      const context = this.isolate.createContextSync();
      this.checker = context.evalSync(CHECKER_SOURCE, { reference: true }) as ivm.Reference<(code: string) => string | null>;
    }
    return { isolate: this.isolate, checker: this.checker };
  }

  private resetIfBroken(): void {
    if (this.isolate?.isDisposed) this.dispose();
  }
}
