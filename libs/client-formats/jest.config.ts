export default {
  displayName: 'client-formats',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
