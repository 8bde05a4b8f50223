/**
 * @fastify/static (the API reference's assets) loads content-disposition, which ships ES modules
 * only: Node 20.19+ requires it natively, jest does not, so that one package is compiled for tests
 * (as typebox is, by the preset).
 */
const ESM_ONLY = 'content-disposition';

export default {
  displayName: 'edge-gateway',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  transform: {
    [`/node_modules/(.*/)?${ESM_ONLY}/.+\\.js$`]: ['@swc/jest', { swcrc: false, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`^(?!.*/node_modules/(${ESM_ONLY}|typebox)/).*/node_modules/`],
};
