export * from './json-logger';
export * from './bootstrap';
