/**
 * The chaos suite (`npm run test:chaos`): test/chaos on the local stack, with the same
 * transform, emulator set-up/teardown and setup file as the integration project of
 * jest.config.js (taken from there, so the two cannot drift apart).
 *
 * In band: each scenario runs three consumer processes against the emulators, which is all a
 * two-core machine can take; parallel files would only slow each other down and blur the
 * timings. summary-reporter.js prints the per-scenario table at the end and writes it to
 * .local/chaos-report.md.
 */
const { projects } = require('./jest.config.js');

const integration = projects.find((project) => project.displayName === 'integration');

/** @type {import('jest').Config} */
module.exports = {
  maxWorkers: 1,
  reporters: ['default', '<rootDir>/test/chaos/summary-reporter.js'],
  projects: [{ ...integration, displayName: 'chaos', roots: ['<rootDir>/test/chaos'] }],
};
