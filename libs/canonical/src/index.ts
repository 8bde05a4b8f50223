export * from './canonical.types';
export * from './media.types';
