export * from './json-logger';
export * from './bootstrap';
export * from './metrics';
export * from './job-tracing';
