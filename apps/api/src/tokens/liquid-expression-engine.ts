import { Context, Liquid, Template, toValueSync, Value } from 'liquidjs';
import { ExpressionEngine, ExpressionFailure, MAX_EXPRESSION_LENGTH } from '@gatehouse/domain';
import { FilterFailure, PLATFORM_FILTERS } from './liquid-filters';

export interface LiquidLimits {
  /** Characters of a template or an expression. */
  maxTemplateLength: number;
  /** Milliseconds one render may take (liquidjs's renderLimit). */
  renderTimeMs: number;
  /** Characters of a rendered text. */
  maxOutputLength: number;
}

export const DEFAULT_LIQUID_LIMITS: LiquidLimits = { maxTemplateLength: MAX_EXPRESSION_LENGTH, renderTimeMs: 100, maxOutputLength: 65_536 };

// Tags that reach templates other than the one given (files, partials): none exists here, and they stay unknown.
const FILE_TAGS = ['include', 'render', 'layout', 'block'];
const CACHE_SIZE = 1_000;

/**
 * The platform's expressions on liquidjs: its standard filters (upcase, downcase, slice, remove, split...) and the
 * platform's own (liquid-filters.ts). Sandboxed: an in-memory template map with no templates (no file system), the
 * tags that read other templates removed, own properties only, strict filters, and bounded template size, render time
 * (renderLimit), memory (memoryLimit) and output. Parsed templates are kept in a small cache.
 */
export class LiquidExpressionEngine extends ExpressionEngine {
  private readonly liquid: Liquid;
  private readonly templates = new Map<string, Template[]>();
  private readonly expressions = new Map<string, Value>();

  constructor(private readonly limits: LiquidLimits = DEFAULT_LIQUID_LIMITS) {
    super();
    this.liquid = new Liquid({
      templates: {},
      strictFilters: true,
      strictVariables: false,
      ownPropertyOnly: true,
      jsTruthy: false,
      parseLimit: limits.maxTemplateLength,
      renderLimit: limits.renderTimeMs,
      memoryLimit: 16 * limits.maxOutputLength,
      cache: false,
    });
    for (const tag of FILE_TAGS) delete this.liquid.tags[tag];
    for (const [name, filter] of Object.entries(PLATFORM_FILTERS)) this.liquid.registerFilter(name, filter);
  }

  async render(template: string, scope: Readonly<Record<string, unknown>>): Promise<string> {
    this.checkLength(template);
    const output = this.guard(() => this.liquid.renderSync(this.parsed(template), { ...scope }) as unknown);
    const text = typeof output === 'string' ? output : String(output);
    if (text.length > this.limits.maxOutputLength) throw new ExpressionFailure(`renders more than ${this.limits.maxOutputLength} characters`);
    return text;
  }

  async evaluate(expression: string, scope: Readonly<Record<string, unknown>>): Promise<unknown> {
    this.checkLength(expression);
    // What liquid.evalValueSync does, with the expression parsed once (a detokenizing proxy evaluates the same ones).
    const value = this.guard(() => {
      const parsed = this.parsedExpression(expression);
      return toValueSync(parsed.value(new Context({ ...scope }, this.liquid.options, {}, { liquid: this.liquid }))) as unknown;
    });
    if (typeof value === 'string' && value.length > this.limits.maxOutputLength)
      throw new ExpressionFailure(`renders more than ${this.limits.maxOutputLength} characters`);
    return value ?? null;
  }

  private checkLength(template: string): void {
    if (template.length > this.limits.maxTemplateLength) throw new ExpressionFailure(`is longer than ${this.limits.maxTemplateLength} characters`);
  }

  private parsed(template: string): Template[] {
    return cached(this.templates, template, () => this.guard(() => this.liquid.parse(template)));
  }

  private parsedExpression(expression: string): Value {
    return cached(this.expressions, expression, () => new Value(expression, this.liquid));
  }

  /** Runs liquidjs, turning its errors into ExpressionFailure with a message that quotes no data. */
  private guard<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw new ExpressionFailure(describe(error));
    }
  }
}

/** A bounded map of parsed text (oldest first out). */
function cached<T>(cache: Map<string, T>, text: string, parse: () => T): T {
  let parsed = cache.get(text);
  if (parsed === undefined) {
    parsed = parse();
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(text, parsed);
  }
  return parsed;
}

function describe(error: unknown): string {
  let cause: unknown = error;
  while (cause && typeof cause === 'object' && 'originalError' in cause && (cause as { originalError?: unknown }).originalError) {
    cause = (cause as { originalError: unknown }).originalError;
  }
  if (cause instanceof FilterFailure) return cause.message;
  const name = (error as { name?: string } | null)?.name;
  const message = (error as { message?: string } | null)?.message ?? '';
  // Parse and tokenization errors speak of the template (the caller's expression), not of data.
  if (name === 'ParseError' || name === 'TokenizationError') return message.slice(0, 200);
  if (/limit exceeded/.test(message)) return message.replace(/,\s*line:.*$/, '').slice(0, 100);
  return 'could not be rendered';
}
