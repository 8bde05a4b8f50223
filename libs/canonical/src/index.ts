export * from './canonical.types';
export * from './media.types';
export * from './speech.types';
