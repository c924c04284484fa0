import { randomInt } from 'node:crypto';
import { captureLog, CapturedLog } from '@gatehouse/test-support/log-capture';
import { findPlaintext } from '@gatehouse/test-support/plaintext-scan';
import { TEST_REDIS_URL } from '@gatehouse/test-support/test-env';
import { startTestApp, TestApp } from '@gatehouse/test-support/test-app';

/** Plaintext a test writes to the vault, remembered for the scan at its end: never seen before, so a hit is a leak. */
export class TokenSecrets {
  readonly values: string[] = [];

  /** A random card number (Luhn-valid). */
  card(): string {
    let digits = '4';
    while (digits.length < 15) digits += String(randomInt(10));
    let sum = 0;
    for (let i = 0; i < 15; i++) {
      let d = Number(digits[14 - i]);
      if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
    return this.remember(digits + String((10 - (sum % 10)) % 10));
  }

  /** A random string no other test writes. */
  text(prefix: string): string {
    return this.remember(`${prefix}_${randomInt(1e9, 1e10)}${randomInt(1e9, 1e10)}`);
  }

  remember(value: string): string {
    this.values.push(value);
    return value;
  }
}

/** The API with Redis and a captured debug log, proxies allowed to loopback destinations: what the scans look at. */
export async function scannedApp(prefix: string): Promise<{ t: TestApp; log: CapturedLog }> {
  const log = captureLog('debug');
  const t = await startTestApp(
    {
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: `${prefix}-${randomInt(1e9)}`,
      LOG_LEVEL: 'debug',
      PROXY_ALLOW_HTTP: 'true',
      PROXY_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
      REACTOR_POOL_SIZE: '1',
    },
    { logger: log.nest, accessLog: log.root },
  );
  return { t, log };
}

/**
 * Where any secret is after a run: every table, every Redis key, the service log. Closes `t` first so everything is
 * written and flushed, and scans through a fresh app over the same database.
 */
export async function plaintextAfter(t: TestApp, log: CapturedLog, secrets: TokenSecrets): Promise<string[]> {
  await t.close();
  const scanner = await startTestApp();
  try {
    const found = await findPlaintext(scanner.database.dataSource, TEST_REDIS_URL, secrets.values);
    const output = log.text();
    if (output.length === 0) found.push('the service log is empty: nothing was scanned');
    secrets.values.forEach((secret, i) => output.includes(secret) && found.push(`the service log holds secret #${i}`));
    return found;
  } finally {
    await scanner.close();
  }
}
