export * from './config';
export * from './log-signing-key';
export * from './vault-key';
export * from './private-directory';
export { gatehouseVersion } from './version';
