import { actorOf } from '../audit/actor';
import type { NewAuditEvent } from '../audit/audit-event';
import { Principal } from '../applications/principal';
import { FieldErrorCollector, ValidationError } from '../shared/domain-error';
import { UnitOfWork } from '../shared/unit-of-work';
import { ExpressionEngine, ExpressionFailure, expressionError } from './expression-engine';
import {
  isExpired,
  isTokenId,
  MAX_DETOKENIZE_EXPRESSIONS,
  MAX_DETOKENIZED_LENGTH,
  MAX_TOKENS_PER_TOKENIZE,
  MaskTemplate,
  Token,
  TokenInput,
  TokenType,
} from './token';
import { decideAccess, requireTokenPermission } from './token-access';
import { storeToken } from './token-commands';
import { PreparedToken, tokenEvent, TokenVault, TokenView } from './token-vault';
import { TokenRepository } from './token.repository';

/** The members of a token request in a tokenize body (the platform's create-token body). */
const REQUEST_MEMBERS = new Set(['id', 'type', 'data', 'mask', 'containers', 'metadata', 'fingerprint_expression', 'deduplicate_token', 'expires_at']);

/** `[0].card` from a parent path and a member name or index. */
function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key.slice(0, 100)}` : key.slice(0, 100);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A token request: an object with both `type` and `data`. */
function isTokenRequest(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && 'type' in value && 'data' in value;
}

/** A token request of a tokenize body as the create's input; its shape errors under `path`. */
function requestInput(request: Record<string, unknown>, path: string, errors: FieldErrorCollector): TokenInput {
  const at = (name: string) => childPath(path, name);
  for (const name of Object.keys(request)) if (!REQUEST_MEMBERS.has(name)) errors.add(at(name), 'is not allowed');
  const { id, type, data, mask, containers, metadata, fingerprint_expression, deduplicate_token, expires_at } = request;
  if (id !== undefined && typeof id !== 'string') errors.add(at('id'), 'must be a string');
  if (typeof type !== 'string') errors.add(at('type'), 'must be a string');
  if (fingerprint_expression != null && typeof fingerprint_expression !== 'string') errors.add(at('fingerprint_expression'), 'must be a string');
  if (deduplicate_token != null && typeof deduplicate_token !== 'boolean') errors.add(at('deduplicate_token'), 'must be a boolean');
  let expiresAt: Date | null | undefined;
  if (expires_at != null) {
    expiresAt = typeof expires_at === 'string' ? new Date(expires_at) : new Date(Number.NaN);
    if (Number.isNaN(expiresAt.getTime()) || !/^\d{4}-\d\d-\d\dT/.test(String(expires_at))) errors.add(at('expires_at'), 'must be an ISO 8601 date-time');
  }
  return {
    id: id as string | undefined,
    type: type as TokenType,
    data,
    mask: mask as MaskTemplate | null | undefined,
    containers: containers as string[] | undefined,
    metadata: metadata as Record<string, string> | undefined,
    fingerprintExpression: fingerprint_expression as string | null | undefined,
    deduplicateToken: deduplicate_token === true,
    expiresAt,
  };
}

/**
 * POST /tokenize: any JSON; each object with `type` and `data` becomes a token (in arrays, in objects, at the top),
 * answered in the same shape with the token (as the caller's rules show it) in its place. At most 100 tokens; all or
 * nothing (one transaction). Each token created is logged.
 */
export class Tokenize {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: TokenVault,
  ) {}

  async execute(principal: Principal, body: unknown): Promise<unknown> {
    requireTokenPermission(principal, 'token:create');
    if (body === undefined) throw ValidationError.single('body', 'is required');
    const requests: { path: string; input: TokenInput }[] = [];
    const errors = new FieldErrorCollector();
    const collect = (value: unknown, path: string): void => {
      if (isTokenRequest(value)) requests.push({ path, input: requestInput(value, path, errors) });
      else if (Array.isArray(value)) value.forEach((item, i) => collect(item, childPath(path, i)));
      else if (isRecord(value)) for (const [key, item] of Object.entries(value)) collect(item, childPath(path, key));
    };
    collect(body, '');
    if (requests.length > MAX_TOKENS_PER_TOKENIZE)
      throw ValidationError.single('body', `holds ${requests.length} token requests; at most ${MAX_TOKENS_PER_TOKENIZE} are allowed`);
    errors.throwIfAny();
    const prepared = new Map<string, { input: TokenInput; prepared: PreparedToken }>();
    // The expressions of every token requested share one budget of work.
    const expressions = this.vault.expressions.shared();
    for (const { path, input } of requests)
      prepared.set(path, { input, prepared: await this.vault.prepare(principal, input, path ? `${path}.` : '', expressions) });
    const views = await this.uow.run(async (tx) => {
      const out = new Map<string, TokenView>();
      for (const [path, item] of prepared) out.set(path, await storeToken(tx, this.vault, principal, item.prepared, item.input.deduplicateToken === true));
      return out;
    });
    const rebuild = (value: unknown, path: string): unknown => {
      const view = views.get(path);
      if (view && isTokenRequest(value)) return view;
      if (Array.isArray(value)) return value.map((item, i) => rebuild(item, childPath(path, i)));
      if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rebuild(item, childPath(path, key))]));
      return value;
    };
    return rebuild(body, '');
  }
}

/** `{{ <token id> }}` or `{{ <token id> | filter: ... }}`, anywhere in a string. */
const DETOKENIZE_EXPRESSION = /\{\{\s*([A-Za-z0-9_-]+)\s*((?:\|(?:[^}'"]|'[^']*'|"[^"]*")*)?)\}\}/g;

/** Whether `text` holds a detokenization expression (what Detokenize would replace). */
export function holdsDetokenizeExpression(text: string): boolean {
  return text.includes('{{') && text.search(DETOKENIZE_EXPRESSION) !== -1;
}

/**
 * What the expressions of one detokenized body share: an engine with one budget of work (ExpressionEngine.shared),
 * and the characters they may still put into it, all together (a few references to large tokens must not make a body
 * of megabytes, or one too long for a string at all, out of a small request).
 */
class DetokenizeRun {
  private left = MAX_DETOKENIZED_LENGTH;

  constructor(readonly expressions: ExpressionEngine) {}

  spend<T>(value: T): T {
    const length = typeof value === 'string' ? value.length : value === undefined || value === null ? 0 : (JSON.stringify(value)?.length ?? 0);
    this.left -= length;
    if (this.left < 0)
      throw ValidationError.single(
        'body',
        `detokenizes into more than ${MAX_DETOKENIZED_LENGTH} characters of token data; at most ${MAX_DETOKENIZED_LENGTH} are allowed`,
      );
    return value;
  }
}

interface Reference {
  id: string;
  filters: string;
}

function referencesIn(text: string): Reference[] {
  return [...text.matchAll(DETOKENIZE_EXPRESSION)].map((m) => ({ id: m[1]!, filters: m[2]!.trim() }));
}

/**
 * POST /detokenize: every `{{ <id> }}` (with optional filters) in the body's strings is replaced by the token's data,
 * as the caller's token:use rule for the token decides (reveal: the data; mask: the mask's value). A string that is
 * one expression becomes the value itself (an object, a number); inside other text, its text. An unknown, expired or
 * unusable token is a 400 naming where it was (never a blank). Each token used is logged as a read.
 */
export class Detokenize {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: TokenVault,
    private readonly tokens: TokenRepository,
  ) {}

  async execute(principal: Principal, body: unknown): Promise<unknown> {
    requireTokenPermission(principal, 'token:use');
    if (body === undefined) throw ValidationError.single('body', 'is required');
    const wanted = new Map<string, string>();
    let expressions = 0;
    const scan = (value: unknown, path: string): void => {
      if (typeof value === 'string') {
        for (const ref of referencesIn(value)) {
          expressions++;
          if (!wanted.has(ref.id)) wanted.set(ref.id, path || 'body');
        }
      } else if (Array.isArray(value)) value.forEach((item, i) => scan(item, childPath(path, i)));
      else if (isRecord(value)) for (const [key, item] of Object.entries(value)) scan(item, childPath(path, key));
    };
    scan(body, '');
    if (expressions > MAX_DETOKENIZE_EXPRESSIONS)
      throw ValidationError.single('body', `holds ${expressions} expressions; at most ${MAX_DETOKENIZE_EXPRESSIONS} are allowed`);
    if (wanted.size > MAX_TOKENS_PER_TOKENIZE)
      throw ValidationError.single('body', `names ${wanted.size} tokens; at most ${MAX_TOKENS_PER_TOKENIZE} are allowed`);
    if (wanted.size === 0) return body;
    // A read changes nothing: the tokens are read outside a transaction, and the reads' logs committed (one statement
    // where the unit of work can) before anything is answered, as GetToken does.
    const found = new Map((await this.tokens.findByIds(principal.tenantId, [...wanted.keys()].filter(isTokenId))).map((t) => [t.id, t]));
    const errors = new FieldErrorCollector();
    const usable = new Map<string, { token: Token; transform: 'reveal' | 'mask' }>();
    for (const [id, path] of wanted) {
      const token = found.get(id);
      const transform = token && !isExpired(token, this.vault.clock.now()) ? decideAccess(principal, 'token:use', token) : null;
      if (!token || transform === null || transform === 'redact' || (transform === 'mask' && token.mask === null)) {
        errors.add(path, 'names a token that does not exist or that this application may not use');
      } else usable.set(id, { token, transform });
    }
    errors.throwIfAny();
    const values = new Map<string, unknown>();
    const events: NewAuditEvent[] = [];
    for (const [id, { token, transform }] of usable) {
      const secrets = await this.vault.open(token);
      values.set(id, transform === 'reveal' ? secrets.data : secrets.mask);
      events.push(tokenEvent(actorOf(principal), token, 'read', `Token ${id} detokenized`));
    }
    // Replaced before the reads are logged: a body refused for an expression or its size reads nothing.
    const detokenized = await this.replace(body, '', values, new DetokenizeRun(this.vault.expressions.shared()));
    await this.uow.record(events);
    return detokenized;
  }

  private async replace(value: unknown, path: string, values: Map<string, unknown>, run: DetokenizeRun): Promise<unknown> {
    if (typeof value === 'string') return this.substitute(value, path || 'body', values, run);
    if (Array.isArray(value)) return Promise.all(value.map((item, i) => this.replace(item, childPath(path, i), values, run)));
    if (isRecord(value)) {
      const entries = await Promise.all(
        Object.entries(value).map(async ([key, item]) => [key, await this.replace(item, childPath(path, key), values, run)] as const),
      );
      return Object.fromEntries(entries);
    }
    return value;
  }

  private async substitute(text: string, path: string, values: Map<string, unknown>, run: DetokenizeRun): Promise<unknown> {
    const refs = referencesIn(text);
    if (refs.length === 0) return text;
    const evaluate = async (ref: Reference): Promise<unknown> => {
      const data = values.get(ref.id);
      if (!ref.filters) return run.spend(data);
      try {
        return run.spend(await run.expressions.evaluate(`data ${ref.filters}`, { data }));
      } catch (error) {
        if (error instanceof ExpressionFailure) throw expressionError(path, error);
        throw error;
      }
    };
    const whole = text.trim();
    if (refs.length === 1 && whole.startsWith('{{') && whole.endsWith('}}') && [...whole.matchAll(DETOKENIZE_EXPRESSION)][0]![0] === whole) {
      return evaluate(refs[0]!);
    }
    const rendered = await Promise.all(refs.map(evaluate));
    let i = 0;
    return text.replace(DETOKENIZE_EXPRESSION, () => {
      const value = rendered[i++];
      return typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
    });
  }
}
