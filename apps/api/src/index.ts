// What the API's package gives code outside it (the shared test support starts the API in-process through it).
export { createApiApp, CreateApiAppOptions } from './app';
export { createRootLogger } from './http/json-logger';
