/**
 * How a client or a process talks to the emulators: the local region, fake credentials and an
 * endpoint. Its own module, importing nothing local, so that the emulators (emulators.ts) and the
 * SES events layer in front of them (ses-front.ts) both use it without importing each other.
 */
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../lib/cli/target';

/** Region and fake credentials for talking to the emulators (they accept any): one definition, shipped with the operator CLI. */
export { LOCAL_CREDENTIALS, LOCAL_REGION };

/**
 * Environment for processes that talk to the emulators: region and fake credentials (so that
 * nothing can reach a real account with real ones).
 */
export const LOCAL_AWS_ENV: Readonly<Record<string, string>> = {
  AWS_REGION: LOCAL_REGION,
  AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
};

/** Client configuration for one emulator: its endpoint, the local region and fake credentials. */
export function emulatorConfig(endpoint: string): {
  endpoint: string;
  region: string;
  credentials: typeof LOCAL_CREDENTIALS;
} {
  return { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
}
