export { Reactor, REACTOR_DEFAULTS } from './reactor';
export { ReactorCompileError, PROXY_ERROR_STATUSES, type ProxyErrorName } from './transform-errors';
export type {
  QueueWaitOutcome,
  ReactorOptions,
  ReactorStats,
  SvcBridge,
  SvcRequest,
  SvcResponse,
  TransformInput,
  TransformPayload,
  TransformResult,
  OutboundTally,
} from './transform-types';
export { AddressPolicy, DestinationRefusedError, guardedLookup, type LookupFunction, type NetLookupCallback } from './address-policy';
export {
  isJsonMediaType,
  isTransformStatus,
  proxyErrorBody,
  transformBodyOf,
  transformHeaders,
  type ProxyErrorBody,
  type ProxyErrorDescription,
} from './transform-contract';
