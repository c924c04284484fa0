import { loadConfig } from '@gatehouse/config';
import { workerConfigProblem } from './worker-config';

describe('workerConfigProblem', () => {
  it('refuses to start without DATABASE_URL or REDIS_URL, naming what is missing in one line', () => {
    expect(workerConfigProblem(loadConfig({}))).toMatch(/^DATABASE_URL and REDIS_URL must be set: /);
    expect(workerConfigProblem(loadConfig({ DATABASE_URL: 'postgres://db/x' }))).toMatch(/^REDIS_URL must be set: /);
    expect(workerConfigProblem(loadConfig({ REDIS_URL: 'redis://r:6379' }))).toMatch(/^DATABASE_URL must be set: /);
    expect(workerConfigProblem(loadConfig({}))).not.toContain('\n');
  });

  it('starts with both', () => {
    expect(workerConfigProblem(loadConfig({ DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://r:6379' }))).toBeUndefined();
  });
});
