// End-to-end tests wait on real processes and redelivery; `testTimeout` is a global
// option in jest, so each project sets its own here.
jest.setTimeout(60_000);
