export default {
  displayName: 'canonical',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
