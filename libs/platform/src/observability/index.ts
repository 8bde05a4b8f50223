export * from './metric-definitions';
export * from './gateway-metrics';
export * from './tracing';
export * from './logging';
export * from './graceful-shutdown';
export * from './metrics.controller';
export * from './observability.module';
