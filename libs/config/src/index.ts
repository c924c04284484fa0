export * from './config';
export * from './log-signing-key';
