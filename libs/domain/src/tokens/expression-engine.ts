import { DomainError } from '../shared/domain-error';

/**
 * The platform's expression language (Liquid with its filters) as a port: masks, fingerprints, aliases and
 * detokenization render through it. The adapter is sandboxed (no file system, includes or layouts) and bounds a
 * template's size, its render time and its output.
 */
export abstract class ExpressionEngine {
  /** Renders a template (text with `{{ ... }}` outputs) to text. Throws ExpressionFailure. */
  abstract render(template: string, scope: Readonly<Record<string, unknown>>): Promise<string>;
  /** Evaluates one output expression (`data | json: '$.number'`) to its value, a string, number, object... */
  abstract evaluate(expression: string, scope: Readonly<Record<string, unknown>>): Promise<unknown>;

  /**
   * The engine for the expressions of one request (a create's alias, mask and fingerprint; every token of a tokenize;
   * every expression of a detokenized body): each stays bounded as alone, and together they share one budget of work,
   * so that many expressions cannot add up to what no one of them may do. An engine without a budget answers itself.
   */
  shared(): ExpressionEngine {
    return this;
  }
}

/**
 * An expression that does not parse or fails to render. Its message says why in the engine's words or a filter's,
 * never quoting the data it was rendering.
 */
export class ExpressionFailure extends Error {}

/** A failing expression as the 400 that names where it was. */
export function expressionError(field: string, failure: ExpressionFailure): DomainError {
  return new DomainError('validation', 'One or more validation errors occurred.', { [field]: [`expression failed: ${failure.message}`] });
}

/** A whole template that is one output (`{{ data.number }}`), whose value is kept as it is (a number, an object). */
const SINGLE_OUTPUT = /^\s*\{\{(?!.*\{\{)([\s\S]*?)\}\}\s*$/;

/**
 * Renders a template or, when it is a single `{{ }}` output, evaluates it to its value (so `{{ data.expiration_month }}`
 * stays the number it was). Failures become a 400 naming `field`.
 */
export async function renderTemplateValue(
  engine: ExpressionEngine,
  template: string,
  scope: Readonly<Record<string, unknown>>,
  field: string,
): Promise<unknown> {
  try {
    const single = SINGLE_OUTPUT.exec(template);
    return single ? await engine.evaluate(single[1]!, scope) : await engine.render(template, scope);
  } catch (error) {
    if (error instanceof ExpressionFailure) throw expressionError(field, error);
    throw error;
  }
}

/** renderTemplateValue over a mask: a string, or an object or array of them, rendered leaf by leaf. */
export async function renderMask(engine: ExpressionEngine, mask: unknown, scope: Readonly<Record<string, unknown>>, field: string): Promise<unknown> {
  if (typeof mask === 'string') return renderTemplateValue(engine, mask, scope, field);
  if (Array.isArray(mask)) return Promise.all(mask.map((item, i) => renderMask(engine, item, scope, `${field}[${i}]`)));
  if (mask !== null && typeof mask === 'object') {
    const entries = await Promise.all(
      Object.entries(mask).map(async ([key, value]) => [key, await renderMask(engine, value, scope, `${field}.${key}`)] as const),
    );
    return Object.fromEntries(entries);
  }
  return mask;
}
