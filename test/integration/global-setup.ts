/**
 * Jest globalSetup of the integration project: starts DynamoDB Local, fauxqs (SNS/SQS) and
 * aws-ses-v2-local once, on free ports, before any worker starts.
 *
 * Workers are forked after this runs and inherit this process's environment, so the
 * endpoints reach the tests through process.env:
 *   EMULATOR_DYNAMODB_ENDPOINT, EMULATOR_SQS_ENDPOINT, EMULATOR_SNS_ENDPOINT, EMULATOR_SES_ENDPOINT
 * together with AWS_REGION and fake credentials (LOCAL_AWS_ENV).
 *
 * The handle stays in this (jest's main) process for global-teardown.ts. Should jest die
 * without running the teardown, the emulators exit on their own (see tools/dev/local/processes.ts).
 */
import {
  ANY_FREE_PORTS,
  checkJava,
  ensureDynamoDbLocal,
  startEmulators,
  type Emulators,
} from '../../tools/dev/local/emulators';
import { LOCAL_AWS_ENV } from '../../tools/dev/local/emulator-config';

/** Recipients per second the tests' SES allows. */
const TEST_SES_ACCOUNT_RATE = 1000;

declare global {
  // Set by global-setup.ts, read by global-teardown.ts (same process).
  var __integrationEmulators: Emulators | undefined;
}

export default async function globalSetup(): Promise<void> {
  Object.assign(process.env, LOCAL_AWS_ENV);
  await checkJava();
  await ensureDynamoDbLocal();
  // Every test sends through the local SES's sending-rate layer, at a rate no test reaches
  // unless it means to (those start a layer of their own with a low rate).
  const emulators = await startEmulators({ ports: ANY_FREE_PORTS, sesAccountRate: TEST_SES_ACCOUNT_RATE });
  globalThis.__integrationEmulators = emulators;
  Object.assign(process.env, {
    EMULATOR_DYNAMODB_ENDPOINT: emulators.endpoints.dynamodb,
    EMULATOR_SQS_ENDPOINT: emulators.endpoints.sqs,
    EMULATOR_SNS_ENDPOINT: emulators.endpoints.sns,
    EMULATOR_SES_ENDPOINT: emulators.endpoints.ses,
    // aws-ses-v2-local behind the SES events layer: for a run with its own layer, or to hang SES.
    EMULATOR_SES_UPSTREAM_ENDPOINT: emulators.sesEmulator.endpoint,
    EMULATOR_SES_PID: String(emulators.sesEmulator.pid),
  });
}
