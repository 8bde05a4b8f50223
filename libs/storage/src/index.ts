export * from './object-store';
export * from './object-store.env';
export * from './filesystem.object-store';
export * from './s3.object-store';
export * from './file-urls';
