// In-memory fakes of the domain's ports, for tests only (`@gatehouse/domain/testing`; never built into dist).
export * from './in-memory-ports';
export * from './in-memory-proxy.repository';
export * from './in-memory-vault-crypto';
export * from './permissive-proxy-fakes';
export * from './in-memory-token.repository';
export * from './audit-events';
