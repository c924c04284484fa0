export * from './redis-health';
export * from './background-jobs.module';
