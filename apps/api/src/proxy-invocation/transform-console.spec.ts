import type { LoggerService } from '@nestjs/common';
import type { Proxy } from '@gatehouse/domain';
import { TRANSFORM_CONSOLE_MAX_CHARS, TRANSFORM_CONSOLE_MAX_PER_SECOND, TransformConsole } from './transform-console';

const proxy = { id: 'p-1', tenantId: 't-1' } as Proxy;

function recorder(): LoggerService & { written: string[] } {
  const written: string[] = [];
  const keep = (message: unknown) => void written.push(String(message));
  return { written, log: keep, error: keep, warn: keep, debug: keep, verbose: keep, fatal: keep };
}

describe('TransformConsole', () => {
  it('writes nothing when the operator has not turned it on', () => {
    const logger = recorder();
    new TransformConsole(false, logger).write(proxy, 'request', ['secret 4111111111111111']);
    expect(logger.written).toEqual([]);
  });

  it("cuts one run's output at the size bound", () => {
    const logger = recorder();
    new TransformConsole(true, logger).write(proxy, 'response', ['a'.repeat(TRANSFORM_CONSOLE_MAX_CHARS), 'b'.repeat(5000)]);
    expect(logger.written).toHaveLength(1);
    expect(logger.written[0]).toContain('response transform of proxy p-1 (tenant t-1)');
    expect(logger.written[0]).not.toContain('b');
    expect(logger.written[0]).toContain('(5001 more characters cut)');
  });

  it('writes at most the rate bound per second and says how many runs it left out', () => {
    const logger = recorder();
    let now = 10_000;
    const sink = new TransformConsole(true, logger, () => now);
    for (let i = 0; i < TRANSFORM_CONSOLE_MAX_PER_SECOND + 5; i++) sink.write(proxy, 'request', [`line ${i}`]);
    expect(logger.written).toHaveLength(TRANSFORM_CONSOLE_MAX_PER_SECOND);
    now += 1000;
    sink.write(proxy, 'request', ['next second']);
    expect(logger.written).toHaveLength(TRANSFORM_CONSOLE_MAX_PER_SECOND + 1);
    expect(logger.written.at(-1)).toContain('[5 earlier run(s) not logged: rate limit]');
  });
});
