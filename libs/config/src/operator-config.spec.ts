import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';

// Variables of operators' start-up: MIGRATE_ON_START and the supplied first management key.
describe('loadConfig: start-up and bootstrap', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates on start unless MIGRATE_ON_START is false', () => {
    expect(loadConfig({}).migrateOnStart).toBe(true);
    expect(loadConfig({ MIGRATE_ON_START: 'false' }).migrateOnStart).toBe(false);
    expect(() => loadConfig({ MIGRATE_ON_START: 'later' })).toThrow("MIGRATE_ON_START must be true or false, got 'later'");
  });

  it('reads the first management key from BOOTSTRAP_MANAGEMENT_KEY_FILE, one trailing newline cut', () => {
    const key = `key_${'aZ09'.repeat(10)}`;
    const file = join(dir, 'key');
    writeFileSync(file, `${key}\n`);
    expect(loadConfig({ BOOTSTRAP_MANAGEMENT_KEY_FILE: file }).bootstrapManagementKey).toBe(key);
    expect(loadConfig({}).bootstrapManagementKey).toBeUndefined();
  });

  it.each([
    ['too short', `key_${'a'.repeat(39)}`],
    ['too long', `key_${'a'.repeat(41)}`],
    ['without the prefix', 'a'.repeat(44)],
    ['with other characters', `key_${'a'.repeat(39)}-`],
    ['with an inner newline', `key_${'a'.repeat(20)}\n${'a'.repeat(20)}`],
  ])('refuses a key %s, without echoing any of it', (_what, key) => {
    const file = join(dir, 'key');
    writeFileSync(file, key);
    let error: unknown;
    try {
      loadConfig({ BOOTSTRAP_MANAGEMENT_KEY_FILE: file });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^BOOTSTRAP_MANAGEMENT_KEY\(_FILE\) must hold a key as Gatehouse generates them/);
    expect((error as Error).message).not.toContain('aaaa');
  });

  it('names an unreadable file, and refuses the variable and its _FILE together', () => {
    expect(() => loadConfig({ BOOTSTRAP_MANAGEMENT_KEY_FILE: join(dir, 'missing') })).toThrow(
      /BOOTSTRAP_MANAGEMENT_KEY_FILE names '.*missing', which cannot be read \(ENOENT\)/,
    );
    const file = join(dir, 'key');
    writeFileSync(file, `key_${'b'.repeat(40)}`);
    expect(() => loadConfig({ BOOTSTRAP_MANAGEMENT_KEY_FILE: file, BOOTSTRAP_MANAGEMENT_KEY: `key_${'b'.repeat(40)}` })).toThrow(
      'BOOTSTRAP_MANAGEMENT_KEY and BOOTSTRAP_MANAGEMENT_KEY_FILE are both set: set one',
    );
  });
});

describe('loadConfig: the OpenTelemetry sampler', () => {
  it("takes the specification's samplers and a ratio from 0 to 1", () => {
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).not.toThrow();
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'always_off' })).not.toThrow();
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: '1' })).not.toThrow();
  });

  it.each([
    ['OTEL_TRACES_SAMPLER', 'sometimes', /^OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio/],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5', /^OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got '1.5'$/],
    ['OTEL_TRACES_SAMPLER_ARG', '-0.1', /^OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1/],
    ['OTEL_TRACES_SAMPLER_ARG', 'half', /^OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1/],
  ])('refuses %s=%s with one line', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
