import { createHash, generateKeyPairSync, KeyObject } from 'node:crypto';
import { FixedClock, InMemoryLogRepository } from '../testing/in-memory-ports';
import { ChainVerifier } from './chain-verifier';
import { chainHash, GENESIS_HASH } from './log-hash';
import { CheckpointSigner } from './log-signing';
import { keyIdOf, parsePublicKey, rawPublicKey } from './public-keys';
import { AuditEvent } from './log';
import { SignLogCheckpoints } from './log-commands';
import { VerifyLogChain } from './log-queries';

const TENANT = '6f1c1e0e-3b7a-4a43-9f55-0a4b7e1d2c10';

function logs(count: number, from = 0): AuditEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(from + i).padStart(12, '0')}`,
    tenantId: TENANT,
    actorId: null,
    actorType: 'system' as const,
    entityType: 'token',
    entityId: `tok_${from + i}`,
    operation: 'read' as const,
    message: `read ${from + i}`,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, from + i)),
  }));
}

describe('the log chain', () => {
  let privateKey: KeyObject;
  let signer: CheckpointSigner;
  beforeEach(() => {
    privateKey = generateKeyPairSync('ed25519').privateKey;
    signer = new CheckpointSigner(() => privateKey);
  });

  async function signedChain(): Promise<InMemoryLogRepository> {
    const repo = new InMemoryLogRepository();
    const sign = new SignLogCheckpoints(repo, signer, new FixedClock());
    await repo.append(logs(5));
    await sign.execute();
    await repo.append(logs(5, 5));
    return repo;
  }

  it('hashes every field: changing any one changes the hash, and absent differs from empty', () => {
    const [log] = logs(1);
    const base = chainHash(GENESIS_HASH, log!, 1);
    expect(chainHash(GENESIS_HASH, log!, 2)).not.toBe(base);
    expect(chainHash(GENESIS_HASH, { ...log!, message: 'other' }, 1)).not.toBe(base);
    expect(chainHash(GENESIS_HASH, { ...log!, requestId: '' }, 1)).not.toBe(base);
    // Moving bytes from one field to the next is not the same log (the length prefixes).
    expect(chainHash(GENESIS_HASH, { ...log!, entityId: 'tok_0r', message: 'ead 0' }, 1)).not.toBe(base);
  });

  it('is the documented scheme, byte for byte: ASCII, non-ASCII, long, empty and absent fields', () => {
    // The definition in docs/audit-trail.md, written the plain way: one update per field.
    const reference = (previous: string, log: AuditEvent, position: number): string => {
      const h = createHash('sha256').update(Buffer.from(previous, 'hex'));
      const fields = [
        'gatehouse.log.v1',
        log.tenantId,
        String(position),
        log.id,
        log.createdAt.toISOString(),
        log.actorType,
        log.actorId,
        log.entityType,
        log.entityId,
        log.operation,
        log.message,
        log.requestId,
        log.sourceIp,
        log.userAgent,
      ];
      for (const value of fields) {
        const bytes = value === null || value === undefined ? undefined : Buffer.from(value, 'utf8');
        const length = Buffer.alloc(4);
        length.writeUInt32BE(bytes === undefined ? 0xffffffff : bytes.length);
        h.update(length);
        if (bytes) h.update(bytes);
      }
      return h.digest('hex');
    };
    const [base] = logs(1);
    const variants: AuditEvent[] = [
      base!,
      { ...base!, message: 'read ü 🔑 '.repeat(40), userAgent: 'curl/8.5 ünïcode' },
      { ...base!, message: '', entityId: 'x'.repeat(200), requestId: 'req-1', sourceIp: '203.0.113.7', userAgent: 'svc/1.0' },
      { ...base!, actorId: '0b9f6a4e-6a53-4d43-9d0e-3f1a3c9b7e21', actorType: 'application', message: 'm'.repeat(10_000) },
    ];
    let previous = GENESIS_HASH;
    variants.forEach((log, i) => {
      const hash = chainHash(previous, log, i + 1);
      expect(hash).toBe(reference(previous, log, i + 1));
      previous = hash;
    });
  });

  it('verifies a clean chain, and counts the logs after the newest checkpoint as unsigned', async () => {
    const repo = await signedChain();
    const result = await new VerifyLogChain(repo, repo).execute(TENANT, signer.publicKey);
    expect(result).toMatchObject({ valid: true, logs: 10, unsignedLogs: 5, lastVerifiedCheckpoint: { position: 5 } });
  });

  it('names the first log whose content no longer matches its hash', async () => {
    const repo = await signedChain();
    repo.logs[6]!.message = 'changed';
    const result = await new VerifyLogChain(repo, repo).execute(TENANT, signer.publicKey);
    expect(result.firstInvalidLog).toMatchObject({ position: 7, id: repo.logs[6]!.id });
  });

  it('refuses checkpoints of another key and names where the signed range begins after a rewrite', async () => {
    const repo = await signedChain();
    const verifier = new ChainVerifier(TENANT, generateKeyPairSync('ed25519').publicKey);
    verifier.addCheckpoints(repo.checkpoints);
    for (const log of repo.logs) verifier.add(log);
    expect(verifier.finish().invalidCheckpoints[0]!.reason).toMatch(/not by the given key/);

    // A rewrite of log 3 with every later hash recomputed: only the checkpoint at 5 can tell.
    const rewritten = new InMemoryLogRepository();
    await rewritten.append(repo.logs.map((l, i) => ({ ...l, message: i === 2 ? 'rewritten' : l.message })));
    rewritten.checkpoints.push(...repo.checkpoints);
    const result = await new VerifyLogChain(rewritten, rewritten).execute(TENANT, signer.publicKey);
    expect(result.firstInvalidLog).toMatchObject({ position: 1, id: repo.logs[0]!.id });
    expect(result.firstInvalidLog!.reason).toMatch(/from position 1 to 5 do not match/);
  });

  it('reads public keys as PEM, raw base64 or hex, with one key id', () => {
    const publicKey = signer.publicKey;
    const raw = rawPublicKey(publicKey);
    for (const text of [publicKey.export({ format: 'pem', type: 'spki' }) as string, raw.toString('base64'), raw.toString('hex')]) {
      expect(keyIdOf(parsePublicKey(text))).toBe(signer.keyId);
    }
    expect(() => parsePublicKey('abc')).toThrow(/32 bytes/);
  });
});
