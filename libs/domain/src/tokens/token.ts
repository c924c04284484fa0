import { isStorableText } from '../applications/application';
import { FieldErrorCollector } from '../shared/domain-error';

/** The token vault's record (CONTRACT.md section 12). `sealed` is the only place the token's data (and mask) live. */
export interface Token {
  tenantId: string;
  id: string;
  type: TokenType;
  /** VaultCrypto.seal of `{"data": ..., "mask": ...}` under aad `token:<tenant>:<id>`: the data and its rendered mask. */
  sealed: Buffer;
  /** The mask expression (Liquid, or an object of them), not its value: non-sensitive, stored in plaintext. */
  mask: MaskTemplate | null;
  containers: string[];
  /** Non-sensitive string map, plaintext. */
  metadata: Record<string, string>;
  /** Keyed (VaultCrypto.fingerprint) value of the fingerprint expression; null when it rendered empty. */
  fingerprint: string | null;
  fingerprintExpression: string | null;
  expiresAt: Date | null;
  createdBy: string | null;
  createdAt: Date;
  modifiedBy: string | null;
  modifiedAt: Date | null;
}

/** A mask: one Liquid template, or a JSON object (or array) whose string leaves are templates. */
export type MaskTemplate = string | { [key: string]: MaskTemplate } | MaskTemplate[];

/** The opened part of a token: its data and the value its mask rendered to (null: no mask). */
export interface TokenSecrets {
  data: unknown;
  mask: unknown;
}

export const TOKEN_TYPES = [
  'token',
  'card',
  'bank',
  'card_number',
  'social_security_number',
  'employer_id_number',
  'us_bank_routing_number',
  'us_bank_account_number',
] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export function isTokenType(value: unknown): value is TokenType {
  return typeof value === 'string' && (TOKEN_TYPES as readonly string[]).includes(value);
}

export const MAX_TOKEN_ID_LENGTH = 400;
export const TOKEN_ID_PATTERN = /^[A-Za-z0-9_-]{1,400}$/;
/** Bytes of the data's JSON. */
export const MAX_TOKEN_DATA_BYTES = 32_768;
export const MAX_CONTAINERS = 10;
export const MAX_CONTAINER_LENGTH = 200;
export const MAX_METADATA_ENTRIES = 50;
export const MAX_METADATA_KEY_LENGTH = 100;
export const MAX_METADATA_VALUE_LENGTH = 500;
/** Characters of a mask's JSON or of a fingerprint or id expression. */
export const MAX_EXPRESSION_LENGTH = 4_096;
export const MAX_TOKENS_PER_TOKENIZE = 100;
/** `{{ ... }}` expressions in one detokenized body (the same token named again counts again). */
export const MAX_DETOKENIZE_EXPRESSIONS = 1_000;
/** Characters the expressions of one detokenized body may put into it, all together (objects as their JSON). */
export const MAX_DETOKENIZED_LENGTH = 8 * 1024 * 1024;

const CONTAINER_PATTERN = /^\/([A-Za-z0-9_.-]+\/)+$/;

export function isTokenId(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_ID_PATTERN.test(value);
}

/** What a create (or a tokenize item) asks for; everything but type and data is optional. */
export interface TokenInput {
  id?: string;
  type: TokenType;
  data: unknown;
  mask?: MaskTemplate | null;
  containers?: string[];
  metadata?: Record<string, string>;
  fingerprintExpression?: string | null;
  deduplicateToken?: boolean;
  expiresAt?: Date | null;
}

/** PATCH (RFC 7396): `data` and `metadata` are merged member by member; null clears mask, metadata and expires_at. */
export interface TokenPatch {
  data?: unknown;
  mask?: MaskTemplate | null;
  containers?: string[];
  metadata?: Record<string, string | null> | null;
  expiresAt?: Date | null;
}

export function validateContainers(containers: unknown, field: string, errors: FieldErrorCollector): void {
  if (!Array.isArray(containers)) return errors.add(field, 'must be an array of strings');
  if (containers.length === 0) errors.add(field, 'must not be empty');
  if (containers.length > MAX_CONTAINERS) errors.add(field, `must hold at most ${MAX_CONTAINERS} containers`);
  containers.forEach((c, i) => {
    if (typeof c !== 'string') errors.add(`${field}[${i}]`, 'must be a string');
    else if (c.length > MAX_CONTAINER_LENGTH) errors.add(`${field}[${i}]`, `must be at most ${MAX_CONTAINER_LENGTH} characters`);
    else if (!CONTAINER_PATTERN.test(c))
      errors.add(`${field}[${i}]`, "must start and end with '/' and name at least one segment of [A-Za-z0-9_.-], e.g. /pci/high/");
  });
}

export function validateMetadata(metadata: unknown, field: string, errors: FieldErrorCollector, allowNull = false): void {
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return errors.add(field, 'must be an object of strings');
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_ENTRIES) errors.add(field, `must hold at most ${MAX_METADATA_ENTRIES} entries`);
  for (const [key, value] of entries) {
    const at = `${field}.${key.length > 100 ? `${key.slice(0, 100)}...` : key}`;
    if (key.length === 0 || key.length > MAX_METADATA_KEY_LENGTH) errors.add(at, `names must be 1 to ${MAX_METADATA_KEY_LENGTH} characters`);
    if (value === null && allowNull) continue;
    if (typeof value !== 'string') errors.add(at, 'must be a string');
    else if (value.length > MAX_METADATA_VALUE_LENGTH) errors.add(at, `must be at most ${MAX_METADATA_VALUE_LENGTH} characters`);
    else if (!isStorableText(value)) errors.add(at, 'must not contain NUL characters or unpaired surrogates');
  }
}

export function validateMask(mask: unknown, field: string, errors: FieldErrorCollector): void {
  if (mask === null || mask === undefined) return;
  if (!isMaskTemplate(mask, 0)) return errors.add(field, 'must be a string expression or an object or array of string expressions');
  if (JSON.stringify(mask).length > MAX_EXPRESSION_LENGTH) errors.add(field, `must be at most ${MAX_EXPRESSION_LENGTH} characters`);
}

function isMaskTemplate(value: unknown, depth: number): value is MaskTemplate {
  if (typeof value === 'string') return true;
  if (depth > 8 || value === null || typeof value !== 'object') return false;
  return Object.values(value).every((v) => isMaskTemplate(v, depth + 1));
}

export function validateExpiry(expiresAt: Date | null | undefined, now: Date, errors: FieldErrorCollector): void {
  if (expiresAt != null && expiresAt.getTime() <= now.getTime()) errors.add('expires_at', 'must be in the future');
}

/** The data's JSON, refused beyond MAX_TOKEN_DATA_BYTES; `undefined` and `null` are no data. */
export function validateDataSize(data: unknown, field: string, errors: FieldErrorCollector): void {
  if (data === undefined || data === null) return errors.add(field, 'is required');
  if (Buffer.byteLength(JSON.stringify(data)) > MAX_TOKEN_DATA_BYTES) errors.add(field, `must be at most ${MAX_TOKEN_DATA_BYTES} bytes of JSON`);
}

/** RFC 7396 merge patch of a JSON value. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const isObject = target !== null && typeof target === 'object' && !Array.isArray(target);
  // A Map, then fromEntries (data properties): a member named `__proto__` stays a member.
  const base = new Map(isObject ? Object.entries(target as Record<string, unknown>) : []);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) base.delete(key);
    else base.set(key, mergePatch(base.get(key), value));
  }
  return Object.fromEntries(base);
}

/** Whether a token is past its `expires_at` at `now` (and so unreadable, whether or not the worker deleted it yet). */
export function isExpired(token: Pick<Token, 'expiresAt'>, now: Date): boolean {
  return token.expiresAt !== null && token.expiresAt.getTime() <= now.getTime();
}

/** The `aad` binding a sealed token to its tenant and id: a sealed value copied to another row does not open. */
export function tokenAad(tenantId: string, id: string): string {
  return `token:${tenantId}:${id}`;
}
