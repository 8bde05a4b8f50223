export * from './canonical.types';
export * from './media.types';
export * from './audio.types';
export * from './speech.types';
