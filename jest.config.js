/**
 * Test projects. `npx jest` runs unit, infra and integration;
 * `npx jest --selectProjects infra` runs one of them.
 *
 * The chaos suite is deliberately not a project here: it is slow and
 * disruptive, and gets its own command (and config) later.
 *
 * TypeScript is transpiled only (tsconfig has isolatedModules: true, so
 * ts-jest uses transpileModule); type checks come from `npm run build`.
 */

/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.tsx?$': ['ts-jest', {}] },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  testMatch: ['**/*.test.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit'],
    },
    {
      ...common,
      displayName: 'infra',
      roots: ['<rootDir>/test/infra'],
      setupFilesAfterEnv: ['<rootDir>/test/infra/setup.ts'],
      // The construct loads the pre-built handlers: bundle them fresh from the sources first.
      globalSetup: '<rootDir>/test/infra/global-setup.ts',
    },
    {
      ...common,
      displayName: 'package',
      roots: ['<rootDir>/test/package'],
    },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      setupFilesAfterEnv: ['<rootDir>/test/integration/setup.ts'],
      // DynamoDB Local, fauxqs and aws-ses-v2-local, started once for all integration files.
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
      globalTeardown: '<rootDir>/test/integration/global-teardown.ts',
    },
  ],
};
