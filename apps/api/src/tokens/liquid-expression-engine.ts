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
/** The fourth argument of liquidjs's Context: its limits (a MemoryLimit stands for its Limiter). */
type ContextLimits = ConstructorParameters<typeof Context>[3];
/** What the expressions of one request may use together (ExpressionEngine.shared), in the memory one may use alone. */
const SHARED_MEMORY_FACTOR = 8;

/**
 * liquidjs's memory limit (the units its filters charge: characters, array elements), for one render or evaluation,
 * charged to the request's shared one as well when there is one. liquidjs's own Limiter is not exported; this is the
 * part of its shape liquidjs calls on a memory limit (use; check is for the render limit).
 */
class MemoryLimit {
  private used = 0;

  constructor(
    private readonly limit: number,
    private readonly shared: MemoryLimit | null = null,
  ) {}

  use(count: number): void {
    if (!(+count > 0)) return;
    if (this.used + +count > this.limit) throw new Error('memory alloc limit exceeded');
    this.shared?.use(count);
    this.used += +count;
  }
}

/**
 * The platform's expressions on liquidjs: its standard filters (upcase, downcase, slice, remove, split...) and the
 * platform's own (liquid-filters.ts). Sandboxed: an in-memory template map with no templates (no file system), the
 * tags that read other templates removed, own properties only, strict filters, and bounded template size, render time
 * (renderLimit), memory (memoryLimit) and output. Parsed templates are kept in a small cache.
 */
export class LiquidExpressionEngine extends ExpressionEngine {
  private readonly liquid: Liquid;
  private readonly templates: Map<string, Template[]>;
  private readonly expressions: Map<string, Value>;
  /** The request's budget, on an engine from shared(); null on the service's own. */
  private readonly budget: MemoryLimit | null;

  constructor(
    private readonly limits: LiquidLimits = DEFAULT_LIQUID_LIMITS,
    sharing?: { engine: LiquidExpressionEngine; budget: MemoryLimit },
  ) {
    super();
    if (sharing) {
      // The same liquidjs instance and parsed templates; a budget of its own.
      ({ liquid: this.liquid, templates: this.templates, expressions: this.expressions } = sharing.engine);
      this.budget = sharing.budget;
      return;
    }
    this.templates = new Map();
    this.expressions = new Map();
    this.budget = null;
    this.liquid = new Liquid({
      templates: {},
      strictFilters: true,
      strictVariables: false,
      ownPropertyOnly: true,
      jsTruthy: false,
      parseLimit: limits.maxTemplateLength,
      renderLimit: limits.renderTimeMs,
      memoryLimit: memoryPerExpression(limits),
      cache: false,
    });
    for (const tag of FILE_TAGS) delete this.liquid.tags[tag];
    for (const [name, filter] of Object.entries(PLATFORM_FILTERS)) this.liquid.registerFilter(name, filter);
  }

  override shared(): ExpressionEngine {
    return new LiquidExpressionEngine(this.limits, { engine: this, budget: new MemoryLimit(SHARED_MEMORY_FACTOR * memoryPerExpression(this.limits)) });
  }

  async render(template: string, scope: Readonly<Record<string, unknown>>): Promise<string> {
    this.checkLength(template);
    const output = this.guard(() => this.liquid.renderSync(this.parsed(template), this.context(scope, true)) as unknown);
    const text = typeof output === 'string' ? output : String(output);
    if (text.length > this.limits.maxOutputLength) throw new ExpressionFailure(`renders more than ${this.limits.maxOutputLength} characters`);
    return text;
  }

  async evaluate(expression: string, scope: Readonly<Record<string, unknown>>): Promise<unknown> {
    this.checkLength(expression);
    // What liquid.evalValueSync does, with the expression parsed once (a detokenizing proxy evaluates the same ones).
    const value = this.guard(() => {
      const parsed = this.parsedExpression(expression);
      return toValueSync(parsed.value(this.context(scope, false))) as unknown;
    });
    if (typeof value === 'string' && value.length > this.limits.maxOutputLength)
      throw new ExpressionFailure(`renders more than ${this.limits.maxOutputLength} characters`);
    return value ?? null;
  }

  /** A render's or an evaluation's context: its own memory limit (and render time), charged to the budget too. */
  private context(scope: Readonly<Record<string, unknown>>, sync: boolean): Context {
    const memoryLimit = new MemoryLimit(memoryPerExpression(this.limits), this.budget);
    return new Context({ ...scope }, this.liquid.options, { sync }, { liquid: this.liquid, memoryLimit } as unknown as ContextLimits);
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

function memoryPerExpression(limits: LiquidLimits): number {
  return 16 * limits.maxOutputLength;
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
