/**
 * Claims read together (lambdas/runtime/claim-evidence.ts, readClaimsEvidence) against DynamoDB
 * Local: one BatchGetItem answers, for each reference, what a GetItem of that claim answers; a
 * missing claim and a malformed reference answer undefined; more than BatchGetItem's 100 keys
 * are read in several requests.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { CLAIM_ATTRIBUTES } from '../../lambdas/kernel/ledger/binding';
import { readClaimEvidence, readClaimsEvidence } from '../../lambdas/runtime/claim-evidence';
import { emulatorClients } from '../../tools/dev/local/emulators';
import { createResources } from '../../tools/dev/local/resources';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { endpointsFromEnv, uniqueName } from './support';

const clients = emulatorClients(endpointsFromEnv());
const settings = loadLocalSettings();
const prefix = settings.idempotencyKeyPrefix;
let tableName: string;

const refOf = (key: string) => Buffer.from(key).toString('base64url');

/** A claim as the send function leaves it: its attempts, its ledger key, and SES's answer when done. */
async function claim(key: string, attempts: string[], completed?: { attemptId: string; sesMessageId: string }) {
  await clients.dynamodb.send(
    new PutItemCommand({
      TableName: tableName,
      Item: marshall({
        id: `${prefix}#${Buffer.from(key).toString('base64')}`,
        status: completed ? 'COMPLETED' : 'INPROGRESS',
        expiration: Math.floor(Date.now() / 1000) + 3600,
        [CLAIM_ATTRIBUTES.attempts]: new Set(attempts),
        [CLAIM_ATTRIBUTES.ledgerKey]: key,
        ...(completed ? { data: completed } : {}),
      }),
    }),
  );
}

beforeAll(async () => {
  tableName = (await createResources(clients, settings, uniqueName('claims'))).tableName;
});
afterAll(() => clients.destroy());

test('each reference answers what its own GetItem answers', async () => {
  await claim('k-sent', ['a-1'], { attemptId: 'a-1', sesMessageId: 'ses-1' });
  await claim('k-in-flight', ['a-2', 'a-3']);
  const refs = [refOf('k-sent'), refOf('k-in-flight'), refOf('k-never-claimed'), 'not base64url!'];

  const together = await readClaimsEvidence(clients.dynamodb, tableName, prefix, refs);

  expect([...together.keys()].sort()).toEqual([...refs].sort());
  for (const ref of refs) {
    const alone = await readClaimEvidence(clients.dynamodb, tableName, prefix, ref, { consistent: true });
    expect(together.get(ref)).toEqual(alone);
  }
  expect(together.get(refOf('k-sent'))?.completed).toEqual({ attemptId: 'a-1', sesMessageId: 'ses-1' });
  expect(together.get(refOf('k-never-claimed'))).toBeUndefined();
});

test('more than 100 references are read in several requests, none left out', async () => {
  const keys = Array.from({ length: 130 }, (_, i) => `k-many-${i}`);
  for (const key of keys) await claim(key, [`a-${key}`]);
  const sent: number[] = [];
  const counting = {
    send: (command: Parameters<typeof clients.dynamodb.send>[0]) => {
      const input = command.input as { RequestItems?: Record<string, { Keys: unknown[] }> };
      sent.push(input.RequestItems?.[tableName]?.Keys.length ?? 0);
      return clients.dynamodb.send(command);
    },
  } as Pick<typeof clients.dynamodb, 'send'>;

  const together = await readClaimsEvidence(counting, tableName, prefix, keys.map(refOf));

  expect(sent).toEqual([100, 30]);
  expect(keys.map((key) => together.get(refOf(key))?.ledgerKey)).toEqual(keys);
});
