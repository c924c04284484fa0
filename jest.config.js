// Two tiers run by `npm test`: fast unit tests over in-memory fakes, then the integration tiers
// (persistence, api end-to-end, worker, reactor) against real PostgreSQL and Redis.
const swc = JSON.parse(require('fs').readFileSync(__dirname + '/.swcrc', 'utf8'));
delete swc.$schema;
const shared = {
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testEnvironment: 'node',
  moduleNameMapper: {
    // The domain's in-memory fakes: tests only, so no runtime entry (tsconfig.build.json leaves them out of dist).
    '^@gatehouse/domain/testing$': '<rootDir>/libs/domain/src/testing/index.ts',
    '^@gatehouse/(domain|persistence|reactor|jobs|config|runtime|client)$': '<rootDir>/libs/$1/src/index.ts',
    '^@gatehouse/api$': '<rootDir>/apps/api/src/index.ts',
    // Test support shared by the packages' tests (test/support), and the jobs library's own (its queue helpers).
    '^@gatehouse/jobs/testing$': '<rootDir>/libs/jobs/test/support/queue-test-support.ts',
    '^@gatehouse/test-support/(.*)$': '<rootDir>/test/support/$1',
    '^@gatehouse/runtime/tracing$': '<rootDir>/libs/runtime/src/tracing.ts',
  },
};
module.exports = {
  // Integration tests start processes and wait on real services; a project-level testTimeout is not honoured.
  testTimeout: 60000,
  projects: [
    { ...shared, displayName: 'unit', rootDir: __dirname, testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.spec.ts'] },
    {
      ...shared,
      displayName: 'integration',
      rootDir: __dirname,
      testMatch: ['<rootDir>/{apps,libs}/*/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
      testTimeout: 60000,
    },
  ],
};
