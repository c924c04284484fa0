import type { Log, LogCheckpoint } from '@gatehouse/domain';

// The offline verifier's readers of exported logs and saved checkpoints. Kept apart from logs.dto.ts, whose
// @nestjs/swagger decorators cost the CLI about 0.7 s of CPU to load: `gatehouse logs verify --file` needs none of it.

/**
 * A log as `GET /logs` and the exports write it, read back (the offline verifier): the inverse of toLogResponse.
 * Throws a message naming the first field that is missing or malformed.
 */
export function fromLogJson(json: unknown): Log {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('not a JSON object');
  const o = json as Record<string, unknown>;
  const text = (name: string): string => {
    if (typeof o[name] !== 'string') throw new Error(`${name} is missing or not a string`);
    return o[name] as string;
  };
  const optional = (name: string): string | undefined => (o[name] === undefined ? undefined : text(name));
  const createdAt = new Date(text('created_at'));
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== o.created_at)
    throw new Error('created_at is not an ISO 8601 instant in UTC with milliseconds');
  if (!Number.isSafeInteger(o.position) || (o.position as number) < 1) throw new Error('position is missing or not a positive integer');
  const requestId = optional('request_id');
  const sourceIp = optional('source_ip');
  const userAgent = optional('user_agent');
  return {
    id: text('id'),
    tenantId: text('tenant_id'),
    actorId: optional('actor_id') ?? null,
    actorType: (optional('actor_type') ?? null) as Log['actorType'],
    entityType: text('entity_type'),
    entityId: text('entity_id'),
    operation: text('operation') as Log['operation'],
    message: text('message'),
    createdAt,
    ...(requestId === undefined ? {} : { requestId }),
    ...(sourceIp === undefined ? {} : { sourceIp }),
    ...(userAgent === undefined ? {} : { userAgent }),
    position: o.position as number,
    hash: text('hash'),
  };
}

/** The inverse of toCheckpointResponse (the offline verifier reads saved checkpoints). */
export function fromCheckpointJson(json: unknown): LogCheckpoint {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('a checkpoint is not a JSON object');
  const o = json as Record<string, unknown>;
  for (const name of ['tenant_id', 'hash', 'signed_at', 'key_id', 'signature']) {
    if (typeof o[name] !== 'string') throw new Error(`a checkpoint's ${name} is missing or not a string`);
  }
  if (!Number.isSafeInteger(o.position)) throw new Error("a checkpoint's position is missing or not an integer");
  const signedAt = new Date(o.signed_at as string);
  if (Number.isNaN(signedAt.getTime())) throw new Error("a checkpoint's signed_at is not a date-time");
  return {
    tenantId: o.tenant_id as string,
    position: o.position as number,
    hash: o.hash as string,
    signedAt,
    keyId: o.key_id as string,
    signature: o.signature as string,
  };
}
