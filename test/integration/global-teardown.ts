/**
 * Jest globalTeardown of the integration project: stops what global-setup.ts started.
 * Runs in the same process as the set-up; `globalThis.__integrationEmulators` is declared there.
 */
export default async function globalTeardown(): Promise<void> {
  const emulators = globalThis.__integrationEmulators;
  globalThis.__integrationEmulators = undefined;
  await emulators?.stop();
}
