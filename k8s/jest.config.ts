export default { displayName: 'deploy', preset: '../jest.preset.js', rootDir: '.', testMatch: ['<rootDir>/**/*.spec.ts'] };
