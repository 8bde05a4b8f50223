export * from './catalog.config';
export * from './model-catalog';
