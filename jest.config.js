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
      // Synthesis is CPU-bound; give the odd slow synth room on small machines.
      testTimeout: 30_000,
    },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      testTimeout: 60_000,
      // --- emulators (lib/local): owned by the local-stack work, added there ---
      // globalSetup: '<rootDir>/...',
      // globalTeardown: '<rootDir>/...',
      // --------------------------------------------------------------------------
    },
  ],
};
