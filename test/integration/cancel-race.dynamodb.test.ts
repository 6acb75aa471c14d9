/**
 * Cancel racing a send, against DynamoDB Local: the send function's real claim stage (Powertools
 * idempotency through the ledger-aware persistence layer) and the status function's cancel, run
 * at the same moment for many keys. Each key ends in exactly one outcome: sent (and the cancel
 * answers too-late) or cancelled (and nothing is sent, now or by any later copy).
 */
import type { Context } from 'aws-lambda';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { cancelMarkOf } from '../../lambdas/kernel/ledger/cancel-mark';
import { createKeyClaims } from '../../lambdas/send-email/claim/claim';
import { LedgerAwarePersistenceLayer } from '../../lambdas/send-email/claim/persistence';
import { cancelDelivery, type CancelDeps } from '../../lambdas/status/cancel';
import { emulatorClients } from '../../tools/dev/local/emulators';
import { createResources } from '../../tools/dev/local/resources';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { endpointsFromEnv, sleep, uniqueName } from './support';
import type { EmailMessage } from '../../lambdas/kernel/contract';

const clients = emulatorClients(endpointsFromEnv());
const settings = loadLocalSettings();
let deps: CancelDeps;
let tableName: string;

beforeAll(async () => {
  const resources = await createResources(clients, settings, uniqueName('race'));
  tableName = resources.tableName;
  deps = {
    db: DynamoDBDocumentClient.from(clients.dynamodb),
    dynamodb: clients.dynamodb,
    ledgerTableName: resources.ledger.tableName,
    idempotencyTableName: resources.tableName,
    keyPrefix: settings.idempotencyKeyPrefix,
    dedupeWindowSeconds: settings.dedupeWindowSeconds,
  };
});
afterAll(() => clients.destroy());

const email: EmailMessage = {
  to: ['ada@example.com'],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: 's',
  text: 't',
  tags: {},
};

/** The send function's claim stage over DynamoDB Local; `sends` counts the sends made under a claim. */
function claimStage(sends: Map<string, number>) {
  const persistenceStore = new LedgerAwarePersistenceLayer({
    tableName,
    awsSdkV3Client: clients.dynamodb,
    keyPrefix: settings.idempotencyKeyPrefix,
  });
  return createKeyClaims(
    {
      settings: { dedupeWindowSeconds: settings.dedupeWindowSeconds, keyPrefix: settings.idempotencyKeyPrefix },
      persistenceStore,
      now: Date.now,
      sleep,
    },
    async (request) => {
      sends.set(request.key, (sends.get(request.key) ?? 0) + 1);
      // SES takes a while: the cancel lands while the claim is in progress, for some keys.
      await sleep(Math.random() * 30);
      return { sesMessageId: `ses-${request.key}`, sentAt: new Date().toISOString() };
    },
  );
}

test('a cancel racing a send ends in exactly one outcome per key: sent (409) or cancelled (never sent)', async () => {
  const sends = new Map<string, number>();
  const claims = claimStage(sends);
  // An invocation with time to spare: a claim in progress expires with it, as in the function.
  claims.registerContext({ getRemainingTimeInMillis: () => 30_000 } as Context);
  const keys = Array.from({ length: 40 }, (_, i) => `race-${i}-${uniqueName()}`);
  const results = await Promise.all(
    keys.map(async (key, i) => {
      const [claim, cancel] = await Promise.all([
        sleep(i % 3 === 0 ? 5 : 0).then(() => claims.claimAndSend({ key, email })),
        sleep(i % 3 === 1 ? 5 : 0).then(() => cancelDelivery(deps, key, 'race-test')),
      ]);
      return { key, claim, cancel };
    }),
  );
  let sent = 0;
  let cancelled = 0;
  for (const { key, claim, cancel } of results) {
    if (cancel.outcome === 'cancelled') {
      cancelled += 1;
      expect(sends.get(key)).toBeUndefined();
      expect(cancelMarkOf(claim)).toBeDefined();
      expect(cancel.report.status).toBe('cancelled');
    } else {
      sent += 1;
      expect(cancel.outcome).toBe('too-late');
      expect(sends.get(key)).toBe(1);
      expect(claim.duplicate).toBeUndefined();
    }
  }
  expect(sent + cancelled).toBe(keys.length);
  // Both orders happened (the staggered starts see to it): each outcome was exercised.
  expect(sent).toBeGreaterThan(0);
  expect(cancelled).toBeGreaterThan(0);

  // Any later copy of every key: a sent key is a duplicate, a cancelled one stays unsent.
  const again = await Promise.all(keys.map((key) => claims.claimAndSend({ key, email })));
  expect(again.every((r) => r.duplicate === true)).toBe(true);
  expect([...sends.values()].every((n) => n === 1)).toBe(true);
  expect(sends.size).toBe(sent);
}, 60_000);
