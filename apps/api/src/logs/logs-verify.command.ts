import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createPublicKey, KeyObject } from 'node:crypto';
import { resolveLogSigningKey } from '@gatehouse/config';
import {
  ChainVerification,
  ChainVerifier,
  LogCheckpoint,
  LogCheckpointRepository,
  LogRepository,
  LogRetentionRepository,
  parsePublicKey,
  RetentionAnchor,
  VerifyLogChain,
} from '@gatehouse/domain';
import { CliCommand, CliUsageError, CommandContext } from '../cli/command';
import { fromCheckpointJson, fromLogJson } from './log-json';

/**
 * `gatehouse logs verify`: recomputes a tenant's hash chain and checks it against its signed checkpoints, in the
 * database (`--tenant`) or in an export, offline (`--file`). Exit status 0 when everything verifies, 1 when something
 * does not (the first log that does not verify is named), 2 for a usage error.
 *   K (--public-key): a file or a value: the JSON of GET /logs/public-keys (every key, current and retired) or of
 *   GET /logs/public-key, a PEM public key, or the raw key in base64 or hex.
 *   A (--anchor): the JSON of GET /logs/retention-anchor: an export of a tenant whose retention removed its oldest logs
 *   verifies from that anchor (in the database, the newest anchor is read).
 */
export const LOGS_VERIFY_COMMAND: CliCommand = {
  name: 'logs verify',
  synopsis: '--tenant ID [--public-key K] [--json] | --file EXPORT.ndjson --checkpoints CHECKPOINTS.json --public-key K [--anchor A] [--json]',
  summary: "verify a tenant's audit trail (hash chain, signed checkpoints) in the database, or an export offline",
  options: {
    tenant: { type: 'string' },
    file: { type: 'string' },
    checkpoints: { type: 'string' },
    'public-key': { type: 'string' },
    anchor: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values }, context) {
    const option = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
    const offline = option('file') !== undefined;
    if (offline === (option('tenant') !== undefined) || (offline && (option('checkpoints') === undefined || option('public-key') === undefined))) {
      throw new CliUsageError('logs verify needs --tenant ID, or --file, --checkpoints and --public-key (gatehouse logs verify --help)');
    }
    const progress = progressLine();
    const result = offline
      ? await verifyFile(
          option('file')!,
          readCheckpoints(option('checkpoints')!),
          readPublicKeys(option('public-key')!),
          readAnchor(option('anchor')),
          progress,
        )
      : await verifyDatabase(option('tenant')!, option('public-key'), await context(), progress);
    progress.done();
    return { stdout: values.json ? `${JSON.stringify(result, null, 2)}\n` : describe(result), code: result.valid ? 0 : 1 };
  },
};

async function verifyDatabase(
  tenantId: string,
  publicKeyOption: string | undefined,
  { app, config }: CommandContext,
  progress: Progress,
): Promise<ChainVerification> {
  // Without --public-key: this installation's signing key and the retired ones (LOG_SIGNING_RETIRED_KEYS).
  const publicKeys = publicKeyOption
    ? readPublicKeys(publicKeyOption)
    : [createPublicKey(resolveLogSigningKey(config, { generate: false }).key), ...config.logSigningRetiredKeys.map((k) => parsePublicKey(k))];
  return new VerifyLogChain(app.get(LogRepository), app.get(LogCheckpointRepository), app.get(LogRetentionRepository)).execute(
    tenantId,
    publicKeys,
    progress.update,
  );
}

/** Streams the export line by line: memory stays flat whatever its size. */
async function verifyFile(
  file: string,
  checkpoints: LogCheckpoint[],
  publicKey: KeyObject[],
  anchor: RetentionAnchor | undefined,
  progress: Progress,
): Promise<ChainVerification> {
  let verifier: ChainVerifier | undefined;
  let lineNumber = 0;
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    let log;
    try {
      log = fromLogJson(JSON.parse(line));
    } catch (error) {
      throw new Error(`${file}:${lineNumber}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!verifier) {
      // The tenant is the first log's; a log of another tenant further on fails verification.
      verifier = new ChainVerifier(log.tenantId, publicKey, anchor);
      verifier.addCheckpoints(checkpoints);
    }
    if (!verifier.add(log)) break;
    if (lineNumber % 10_000 === 0) progress.update(lineNumber);
  }
  lines.close();
  if (!verifier) {
    verifier = new ChainVerifier(anchor?.tenantId ?? checkpoints[0]?.tenantId ?? '00000000-0000-0000-0000-000000000000', publicKey, anchor);
    verifier.addCheckpoints(checkpoints);
  }
  return verifier.finish();
}

/** A JSON array of checkpoints, the envelope of GET /logs/checkpoints, or one checkpoint per line. */
function readCheckpoints(file: string): LogCheckpoint[] {
  const text = readFileSync(file, 'utf8').trim();
  if (text === '') return [];
  let items: unknown[];
  try {
    const parsed: unknown = JSON.parse(text);
    items = Array.isArray(parsed) ? parsed : Array.isArray((parsed as { data?: unknown }).data) ? (parsed as { data: unknown[] }).data : [parsed];
  } catch {
    items = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as unknown);
  }
  return items.map(fromCheckpointJson);
}

function readPublicKeys(value: string): KeyObject[] {
  const text = existsSync(value) ? readFileSync(value, 'utf8') : value;
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    type KeyJson = { public_key?: string; public_key_pem?: string };
    const json = JSON.parse(trimmed) as KeyJson & { data?: KeyJson[] };
    return (json.data ?? [json]).map((key) => parsePublicKey(key.public_key_pem ?? key.public_key ?? ''));
  }
  return [parsePublicKey(trimmed)];
}

/** The JSON of GET /logs/retention-anchor (or the anchor itself); none: the trail starts at position 1. */
function readAnchor(file: string | undefined): RetentionAnchor | undefined {
  if (file === undefined) return undefined;
  const json = JSON.parse(readFileSync(file, 'utf8')) as { anchor?: unknown };
  const anchor = 'anchor' in json ? json.anchor : json;
  return anchor === null ? undefined : fromCheckpointJson(anchor);
}

function describe(r: ChainVerification): string {
  const lines = [
    `tenant ${r.tenantId}: ${r.valid ? 'VERIFIED' : 'NOT VERIFIED'}`,
    `  logs read: ${r.logs}; chain head: position ${r.head.position}, hash ${r.head.hash}`,
    ...(r.anchor ? [`  retention removed positions 1-${r.anchor.position}: verified from its signed anchor (signed ${r.anchor.signedAt})`] : []),
    `  checkpoints: ${r.checkpoints}` +
      (r.lastVerifiedCheckpoint
        ? `; the newest that verifies covers positions ${(r.anchor?.position ?? 0) + 1}-${r.lastVerifiedCheckpoint.position} (signed ${r.lastVerifiedCheckpoint.signedAt})`
        : '; none verifies yet'),
  ];
  if (r.unsignedLogs > 0) lines.push(`  ${r.unsignedLogs} log(s) after the newest checkpoint are chained but not signed yet (the next checkpoint covers them)`);
  if (r.firstInvalidLog) {
    const l = r.firstInvalidLog;
    lines.push(`  first log that does not verify: position ${l.position}${l.id ? `, id ${l.id}` : ''}: ${l.reason}`);
  }
  for (const c of r.invalidCheckpoints) lines.push(`  checkpoint at position ${c.position} (signed ${c.signedAt}) does not verify: ${c.reason}`);
  return `${lines.join('\n')}\n`;
}

interface Progress {
  update: (done: number, total?: number) => void;
  done: () => void;
}

/** At most one progress line a second, on stderr, so stdout stays the result alone. */
function progressLine(): Progress {
  let last = 0;
  let shown = false;
  return {
    update: (done, total) => {
      if (Date.now() - last < 1000) return;
      last = Date.now();
      shown = true;
      process.stderr.write(`\rverifying: ${done}${total ? ` / ${total}` : ''} logs   `);
    },
    done: () => {
      if (shown) process.stderr.write('\n');
    },
  };
}
