/**
 * `email-pipeline resend`: the release never touches a claim a send holds, deletes a completed one
 * on condition, and only then records who, when and why; the command's arguments.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { run } from '../../../../lib/cli/main';
import { NotReleasable, releaseKey, resendDetail } from '../../../../lib/cli/resend';
import { idempotencyRecordId } from '../../../../lambdas/status/lookup';

type Sent = { name: string; input: Record<string, unknown> };

function fakeDb(claim: Record<string, unknown> | undefined, deleteFails = false) {
  const sent: Sent[] = [];
  const db = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      sent.push({ name: command.constructor.name, input: command.input });
      if (command.constructor.name === 'GetCommand') return { Item: claim };
      if (command.constructor.name === 'DeleteCommand' && deleteFails) {
        throw new ConditionalCheckFailedException({ message: 'failed', $metadata: {} });
      }
      return {};
    },
  };
  return { db: db as never, sent };
}

const target = { idempotencyTableName: 'claims', ledgerTableName: 'ledger', keyPrefix: 'email-pipeline' };
const release = {
  key: 'order-42',
  who: 'arn:aws:sts::1:assumed-role/ops/ada',
  reason: 'template fixed',
  at: '2026-12-03T08:00:00.000Z',
};

test('a completed claim is deleted on condition, then the Resend event is appended and the status starts over', async () => {
  const { db, sent } = fakeDb({ id: 'x', status: 'COMPLETED' });
  expect(await releaseKey({ db, ...target }, release)).toBe('completed');
  expect(sent.map((s) => s.name)).toEqual(['GetCommand', 'DeleteCommand', 'UpdateCommand']);
  expect(sent[0]?.input).toMatchObject({
    Key: { id: idempotencyRecordId('email-pipeline', 'order-42') },
    ConsistentRead: true,
  });
  expect(sent[1]?.input).toMatchObject({ ConditionExpression: 'attribute_not_exists(id) OR #status = :completed' });
  const update = sent[2]?.input as { UpdateExpression: string; ExpressionAttributeValues: Record<string, unknown> };
  expect(update.UpdateExpression).toContain('REMOVE #status, #shard');
  expect(update.ExpressionAttributeValues[':event']).toEqual([
    { type: 'Resend', at: release.at, detail: resendDetail(release.who, release.reason) },
  ]);
});

test('an in-progress claim is never released, and nothing is recorded', async () => {
  const { db, sent } = fakeDb({ id: 'x', status: 'INPROGRESS' });
  await expect(releaseKey({ db, ...target }, release)).rejects.toBeInstanceOf(NotReleasable);
  expect(sent.map((s) => s.name)).toEqual(['GetCommand']);
});

test('a claim taken between the read and the delete: not released, nothing recorded', async () => {
  const { db, sent } = fakeDb(undefined, true);
  await expect(releaseKey({ db, ...target }, release)).rejects.toThrow('started meanwhile');
  expect(sent.map((s) => s.name)).toEqual(['GetCommand', 'DeleteCommand']);
});

test('arguments: a key and a reason are required', async () => {
  const err: string[] = [];
  const io = { out: () => undefined, err: (l: string) => err.push(l) };
  expect(await run(['resend'], io)).toBe(2);
  expect(await run(['resend', 'order-42'], io)).toBe(2);
  expect(await run(['resend', ' order-42 ', '--reason', 'x'], io)).toBe(2);
  expect(await run(['resend', 'order-42', '--reason', 'x'.repeat(501)], io)).toBe(2);
  expect(err.join('\n')).toContain('say which key');
  expect(err.join('\n')).toContain('say why: --reason');
  expect(err.join('\n')).toContain('cannot be a dedupe key');
  expect(err.join('\n')).toContain('--reason is at most 500 characters');
});
