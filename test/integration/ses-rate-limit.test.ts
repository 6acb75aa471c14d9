/**
 * The local SES's sending rate (tools/dev/local/ses-rate-limit.ts) through the real SES v2 client:
 * beyond the rate, counted in recipients, SES's own 429 TooManyRequestsException.
 */
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { emulatorConfig } from '../../tools/dev/local/emulator-config';
import { startSesRateLimit, type SesRateLimit } from '../../tools/dev/local/ses-rate-limit';
import { endpointsFromEnv, uniqueName } from './support';

let limit: SesRateLimit | undefined;
let client: SESv2Client | undefined;
afterEach(async () => {
  client?.destroy();
  await limit?.close();
});

async function start(accountRatePerSecond: number): Promise<SESv2Client> {
  limit = await startSesRateLimit({ target: endpointsFromEnv().ses, accountRatePerSecond });
  client = new SESv2Client({ ...emulatorConfig(limit.endpoint), maxAttempts: 1 });
  return client;
}

const domain = `${uniqueName('rate')}.example.com`;
function send(ses: SESv2Client, to: readonly string[]) {
  return ses.send(
    new SendEmailCommand({
      FromEmailAddress: 'noreply@example.com',
      Destination: { ToAddresses: [...to] },
      Content: { Simple: { Subject: { Data: 'Rate' }, Body: { Text: { Data: 'Hi' } } } },
    }),
  );
}

test('beyond the rate SES answers 429 TooManyRequestsException, which the SDK raises by name', async () => {
  const ses = await start(2);
  await send(ses, [`a@${domain}`]);
  await send(ses, [`b@${domain}`]);
  const error = await send(ses, [`c@${domain}`]).then(
    () => undefined,
    (e: unknown) => e as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } },
  );
  expect(error?.name).toBe('TooManyRequestsException');
  expect(error?.$metadata?.httpStatusCode).toBe(429);
  expect(error?.message).toBe('Maximum sending rate exceeded.');
  expect(limit?.counts()).toEqual({ accepted: 2, throttled: 1, recipients: 2 });
});

test('the rate counts recipients, not requests', async () => {
  const ses = await start(3);
  await send(ses, [`a@${domain}`, `b@${domain}`, `c@${domain}`]);
  await expect(send(ses, [`d@${domain}`])).rejects.toMatchObject({ name: 'TooManyRequestsException' });
});

test('other requests pass through untouched', async () => {
  await start(1);
  const response = await fetch(`${limit?.endpoint}/store`);
  expect(response.ok).toBe(true);
});
