export * from './config';
export { GROUPS, VARIABLES } from './schema';
export type { Reader, Variable } from './schema';
export { documentedVariables } from './config-docs';
export * from './log-signing-key';
export * from './vault-key';
export * from './private-directory';
export { gatehouseVersion } from './version';
