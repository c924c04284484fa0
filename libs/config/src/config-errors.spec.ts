import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';
import { VARIABLES } from './schema';

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig reports every problem at once', () => {
  it('names each refused variable on a line of its own, in the order of the schema', () => {
    const problems = problemsOf({ LOG_LEVEL: 'loud', PORT: 'eighty', VAULT_KEY: 'hunter2-not-a-key', REACTOR_TIMEOUT_MS: '5000' });
    expect(problems).toEqual([
      "PORT must be an integer from 0 to 65535, got 'eighty'",
      'VAULT_KEY must be a 32-byte key as base64 or hex (openssl rand -base64 32)',
      "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got 'loud'",
    ]);
    for (const problem of problems) expect(problem).not.toContain('\n');
  });

  it('throws them as one ConfigError whose message has a line for each', () => {
    expect(() => loadConfig({ PORT: 'x', QUEUE_PREFIX: 'a b' })).toThrow(/^PORT must be an integer.*\nQUEUE_PREFIX must match/);
  });

  it('keeps the problems of files, cross-checks and parsing together', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'));
    try {
      const problems = problemsOf({
        DATABASE_URL_FILE: join(dir, 'missing'),
        REDIS_URL: 'redis://cache',
        REDIS_URL_FILE: join(dir, 'missing'),
        LOG_SIGNING_KEY: 'x',
        LOG_SIGNING_KEY_FILE: '/k',
        CONSOLE_PUBLIC_URL: 'https://gh.example.com',
        API_PUBLIC_URL: 'https://gh.example.com/',
      });
      expect(problems).toEqual([
        expect.stringMatching(/^DATABASE_URL_FILE names '.*missing', which cannot be read \(ENOENT\)$/),
        'REDIS_URL and REDIS_URL_FILE are both set: set one',
        'LOG_SIGNING_KEY must be an Ed25519 private key: PKCS#8 PEM, or the 32-byte seed as base64 or hex',
        'LOG_SIGNING_KEY and LOG_SIGNING_KEY_FILE are both set: give one',
        "CONSOLE_PUBLIC_URL and API_PUBLIC_URL must be different origins: the console never shares the API's origin",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('skips a rule over variables one of which is already refused (no second line about the same value)', () => {
    expect(problemsOf({ PORT: '99999', CONSOLE_PORT: '99999' })).toEqual([
      "PORT must be an integer from 0 to 65535, got '99999'",
      "CONSOLE_PORT must be an integer from 0 to 65535, got '99999'",
    ]);
    expect(problemsOf({ REACTOR_POOL_SIZE: '0', REACTOR_TENANT_MAX_CONCURRENCY: '300' })).toEqual([
      "REACTOR_POOL_SIZE must be an integer from 1 to 256, got '0'",
      "REACTOR_TENANT_MAX_CONCURRENCY must be an integer from 1 to 256, got '300'",
    ]);
    expect(problemsOf({ REACTOR_POOL_SIZE: '4', REACTOR_TENANT_MAX_CONCURRENCY: '5' })).toEqual([
      "REACTOR_TENANT_MAX_CONCURRENCY must be an integer from 1 to 4, got '5'",
    ]);
  });
});

describe('secrets in problems', () => {
  const secrets = VARIABLES.filter((v) => v.secret && v.kind);

  it('covers the variables that carry credentials or keys', () => {
    expect(secrets.map((v) => v.name)).toEqual(['DATABASE_URL', 'REDIS_URL', 'VAULT_KEY', 'VAULT_KEY_PREVIOUS', 'LOG_SIGNING_KEY', 'BOOTSTRAP_MANAGEMENT_KEY']);
  });

  it.each(secrets.map((v) => v.name))('%s refused is named, its value never echoed', (name) => {
    for (const value of ['s3cr3t-material', 'ftp://user:s3cr3t@host/x']) {
      const problems = problemsOf({ [name]: value });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(new RegExp(`^${name}`));
      expect(problems[0]).not.toContain('s3cr3t');
    }
  });
});
