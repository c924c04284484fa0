export * from './json-logger';
export * from './bootstrap';
export * from './adapter-modules';
export * from './metrics';
export * from './job-tracing';
export * from './log-streams';
