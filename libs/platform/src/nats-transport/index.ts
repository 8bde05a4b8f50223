export * from './wire';
export * from './frame-bundles';
export * from './client';
export * from './server';
export * from './validators';
export * from './client-connection';
export * from './handles';
