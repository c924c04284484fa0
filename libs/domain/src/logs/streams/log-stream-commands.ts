import { actorOf } from '../../audit/actor';
import { Principal, requirePermission } from '../../applications/principal';
import { Clock } from '../../shared/clock';
import { ConflictError, FieldErrorCollector, NotFoundError } from '../../shared/domain-error';
import { newId } from '../../shared/ids';
import { Page, PageQuery } from '../../shared/page';
import { TransactionScope, UnitOfWork } from '../../shared/unit-of-work';
import {
  generateSigningSecret,
  isStreamKind,
  LOG_STREAM_KINDS,
  LogStream,
  LogStreamStatus,
  MAX_LOG_STREAMS_PER_TENANT,
  resolveStreamSettings,
  StreamValidationContext,
  validateStreamName,
} from './log-stream';
import { LogStreamRepository } from './log-stream.repository';

export const LOG_STREAM_PERMISSION = 'log:stream';

export interface CreateLogStreamInput {
  name?: unknown;
  kind?: unknown;
  settings?: unknown;
  /** `now` (default): from the tenant's next log; `beginning`: every log from position 1. */
  start?: unknown;
}

export interface UpdateLogStreamInput {
  name?: unknown;
  /** Merged over the stored settings; a member set to null returns to its default (or is removed). */
  settings?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const PAST_TENSE = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/**
 * The audit log of a change to a stream. Streams are part of the tenant's configuration: the log names the tenant as
 * its entity (the entity-type catalogue of CONTRACT.md section 8 is closed) and the stream in its message, never a
 * secret.
 */
function recordStreamChange(tx: TransactionScope, principal: Principal, stream: LogStream, operation: keyof typeof PAST_TENSE, detail = ''): void {
  tx.record({
    tenantId: stream.tenantId,
    actor: actorOf(principal),
    entityType: 'tenant',
    entityId: stream.tenantId,
    operation,
    message: `Log stream '${stream.name}' (${stream.kind}, ${stream.id}) ${PAST_TENSE[operation]}${detail}`,
  });
}

export class CreateLogStream {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clock: Clock,
    private readonly context: StreamValidationContext,
  ) {}

  /** The stream and, for `https`, its signing secret: shown this once. */
  async execute(principal: Principal, input: CreateLogStreamInput): Promise<{ stream: LogStream; signingSecret?: string }> {
    requirePermission(principal, LOG_STREAM_PERMISSION);
    const errors = new FieldErrorCollector();
    validateStreamName(input.name, errors);
    const start = input.start ?? 'now';
    if (start !== 'now' && start !== 'beginning') errors.add('start', 'must be now or beginning');
    if (!isStreamKind(input.kind)) {
      errors.add('kind', `must be one of ${LOG_STREAM_KINDS.join(', ')}`);
      errors.throwIfAny();
      return undefined as never;
    }
    const kind = input.kind;
    const given = input.settings ?? {};
    if (!isRecord(given)) errors.add('settings', 'must be an object');
    const resolved = resolveStreamSettings(kind, isRecord(given) ? given : {}, {}, this.context, errors);
    errors.throwIfAny();
    const signingSecret = kind === 'https' ? generateSigningSecret() : undefined;
    return this.uow.run(async (tx) => {
      const repo = tx.get(LogStreamRepository);
      if ((await repo.count(principal.tenantId)) >= MAX_LOG_STREAMS_PER_TENANT) {
        throw new ConflictError(`A tenant has at most ${MAX_LOG_STREAMS_PER_TENANT} log streams`);
      }
      const now = this.clock.now();
      const stream: LogStream = {
        id: newId(),
        tenantId: principal.tenantId,
        name: input.name as string,
        kind,
        settings: resolved.settings,
        secrets: signingSecret ? { ...resolved.secrets, signing_secret: signingSecret } : resolved.secrets,
        paused: false,
        position: start === 'beginning' ? 0 : await repo.headPosition(principal.tenantId),
        lastSyncedAt: null,
        lastError: null,
        lastErrorAt: null,
        failures: 0,
        delivered: 0,
        redelivered: 0,
        createdBy: principal.applicationId,
        createdAt: now,
        modifiedBy: principal.applicationId,
        modifiedAt: now,
      };
      await repo.insert(stream);
      recordStreamChange(tx, principal, stream, 'create', ` from position ${stream.position + 1}`);
      return { stream, ...(signingSecret ? { signingSecret } : {}) };
    });
  }
}

abstract class StreamChange {
  constructor(
    protected readonly uow: UnitOfWork,
    protected readonly clock: Clock,
  ) {}

  protected change(principal: Principal, id: string, apply: (current: LogStream) => LogStream, detail: (s: LogStream) => string): Promise<LogStream> {
    requirePermission(principal, LOG_STREAM_PERMISSION);
    return this.uow.run(async (tx) => {
      const repo = tx.get(LogStreamRepository);
      const current = await repo.findById(principal.tenantId, id);
      if (!current) throw new NotFoundError('Log stream');
      const updated: LogStream = { ...apply(current), modifiedBy: principal.applicationId, modifiedAt: this.clock.now() };
      if (!(await repo.update(updated, !updated.paused))) throw new NotFoundError('Log stream');
      recordStreamChange(tx, principal, updated, 'update', detail(updated));
      return updated;
    });
  }
}

export class UpdateLogStream extends StreamChange {
  constructor(
    uow: UnitOfWork,
    clock: Clock,
    private readonly context: StreamValidationContext,
  ) {
    super(uow, clock);
  }

  execute(principal: Principal, id: string, input: UpdateLogStreamInput): Promise<LogStream> {
    return this.change(
      principal,
      id,
      (current) => {
        const errors = new FieldErrorCollector();
        if (input.name !== undefined) validateStreamName(input.name, errors);
        if (input.settings !== undefined && !isRecord(input.settings)) errors.add('settings', 'must be an object');
        const patch = isRecord(input.settings) ? input.settings : {};
        const merged: Record<string, unknown> = { ...current.settings };
        for (const [name, value] of Object.entries(patch)) {
          if (value === null) delete merged[name];
          else merged[name] = value;
        }
        // A secret set to null is removed too (a required one is then reported missing).
        const kept = Object.fromEntries(Object.entries(current.secrets).filter(([name]) => patch[name] !== null && name !== 'signing_secret'));
        const resolved = resolveStreamSettings(current.kind, merged, kept, this.context, errors);
        errors.throwIfAny();
        const signing = current.secrets.signing_secret;
        return {
          ...current,
          name: (input.name as string | undefined) ?? current.name,
          settings: resolved.settings,
          secrets: signing ? { ...resolved.secrets, signing_secret: signing } : resolved.secrets,
        };
      },
      () => (input.settings === undefined ? '' : ': settings changed'),
    );
  }
}

export class PauseLogStream extends StreamChange {
  execute(principal: Principal, id: string): Promise<LogStream> {
    return this.change(
      principal,
      id,
      (s) => ({ ...s, paused: true }),
      () => ': paused',
    );
  }
}

export class ResumeLogStream extends StreamChange {
  execute(principal: Principal, id: string): Promise<LogStream> {
    return this.change(
      principal,
      id,
      (s) => ({ ...s, paused: false }),
      () => ': resumed',
    );
  }
}

export class DeleteLogStream {
  constructor(private readonly uow: UnitOfWork) {}

  async execute(principal: Principal, id: string): Promise<void> {
    requirePermission(principal, LOG_STREAM_PERMISSION);
    await this.uow.run(async (tx) => {
      const repo = tx.get(LogStreamRepository);
      const current = await repo.findById(principal.tenantId, id);
      if (!current || !(await repo.delete(principal.tenantId, id))) throw new NotFoundError('Log stream');
      recordStreamChange(tx, principal, current, 'delete');
    });
  }
}

export class GetLogStream {
  constructor(private readonly repo: LogStreamRepository) {}

  async execute(principal: Principal, id: string): Promise<LogStreamStatus> {
    requirePermission(principal, LOG_STREAM_PERMISSION);
    const stream = await this.repo.findById(principal.tenantId, id);
    if (!stream) throw new NotFoundError('Log stream');
    return (await this.repo.status([stream]))[0]!;
  }
}

export class ListLogStreams {
  constructor(private readonly repo: LogStreamRepository) {}

  async execute(principal: Principal, page: PageQuery): Promise<Page<LogStreamStatus>> {
    requirePermission(principal, LOG_STREAM_PERMISSION);
    const listed = await this.repo.list(principal.tenantId, page);
    return { ...listed, items: await this.repo.status(listed.items) };
  }
}
