export * from './catalog.config';
export * from './model-catalog';
export * from './decision-model';
export * from './route-plan';
