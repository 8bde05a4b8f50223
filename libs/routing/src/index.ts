export * from './routing-redis';
export * from './route-breakers';
export * from './route-quotas';
export * from './route-entry';
export * from './fallback';
