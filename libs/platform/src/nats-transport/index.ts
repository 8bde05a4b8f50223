export * from './wire';
export * from './client';
export * from './server';
export * from './validators';
export * from './client-connection';
export * from './handles';
