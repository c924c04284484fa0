export * from './metrics-registry';
export * from './background-metrics';
export * from './reactor-metrics';
export * from './dependency-metrics';
