/**
 * `email-pipeline resend`: the release never touches a claim a send holds, deletes a completed one
 * on condition, and only then records who, when and why; the command's arguments; --team, which
 * acts on the team's key (`<team>#<key>`) and names it so, against a local pipeline whose tables and
 * queues answer in this process.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { run } from '../../../../lib/cli/main';
import { NotReleasable, releaseKey, resendDetail } from '../../../../lib/cli/resend';
import { republishAdvice, resendArguments } from '../../../../lib/cli/resend-command';
import { idempotencyRecordId } from '../../../../lambdas/status/lookup';
import { LEDGER_TABLE, ledgerKey } from '../../../../lambdas/kernel/ledger/schema';
import { DLQ_ATTRIBUTE } from '../../../../lambdas/kernel/names';
import { capture, cli, fakeLocalPipeline, type SentCommand } from '../../helpers';

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

describe('resend --team', () => {
  const io = { out: () => undefined, err: () => undefined };

  test("the key acted on is the team's: <team>#<key> (in Unicode NFC), the bare key kept for the advice", () => {
    expect(resendArguments(['--team', 'billing', 'order-42', '--reason', 'x', '--yes'], io)).toMatchObject({
      asked: 'order-42',
      key: 'billing#order-42',
      team: 'billing',
    });
    expect(resendArguments(['--team', 'billing', 'cafe\u0301', '--reason', 'x', '--yes'], io)?.key).toBe(
      'billing#caf\u00e9',
    );
    const bare = resendArguments(['order-42', '--reason', 'x', '--yes'], io);
    expect(bare?.key).toBe('order-42');
    expect(bare).not.toHaveProperty('team');
  });

  test.each([['Billing'], ['billing#x'], [''], ['1billing']])(
    'resend --team %j: exit 2, the team name refused, nothing on stdout',
    async (team) => {
      const ran = await cli('resend', '--team', team, 'order-42', '--reason', 'fixed', '--yes');
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain(
        `${JSON.stringify(team)} cannot be a team: a team name is 1 to 32 lowercase letters, digits or "-", starting with a letter`,
      );
      expect(ran.stdout).toBe('');
    },
  );

  test('resend --help tells of --team', async () => {
    expect((await cli('resend', '--help')).stdout).toContain('resend [--team NAME] <key>');
  });

  test("a team's key is published again through the team's topic, under the key the publisher gave", () => {
    const lines = republishAdvice('billing#order-42', ' --stack S', { name: 'billing', asked: 'order-42' });
    expect(lines.join('\n')).toContain("team billing's topic");
    expect(lines.join('\n')).toContain('--idempotency-key "order-42"');
    expect(lines.join('\n')).not.toContain('--idempotency-key "billing#order-42"');
    expect(republishAdvice('order-42', ' --stack S').join('\n')).toContain(
      '--idempotency-key "order-42" --to ... --subject ... --text ... --stack S',
    );
  });

  describe('against a local pipeline', () => {
    const pipeline = fakeLocalPipeline();
    const deadLetter = (key: string) => ({
      MessageId: `m-${key}`,
      ReceiptHandle: `r-${key}`,
      Body: '{}',
      MessageAttributes: {
        [DLQ_ATTRIBUTE.dedupeKey]: { DataType: 'String', StringValue: key },
        [DLQ_ATTRIBUTE.errorClass]: { DataType: 'String', StringValue: 'retryable' },
        [DLQ_ATTRIBUTE.errorCode]: { DataType: 'String', StringValue: 'RetryBudgetExhausted' },
      },
    });
    /** A completed claim; the DLQ holds a dead letter of each of `keys`, once. */
    const answering = (keys: string[]) => {
      let received = false;
      pipeline.answer = (command: SentCommand) => {
        if (command.name === 'GetCommand') return { Item: { id: 'x', status: 'COMPLETED' } };
        if (command.name !== 'ReceiveMessageCommand' || received) return {};
        received = true;
        return { Messages: keys.map(deadLetter) };
      };
    };

    test("releases and redrives the team's key, not the bare one, and every line names <team>#<key>", async () => {
      answering(['order-42', 'billing#order-42', 'sales#order-42']);
      const c = capture();
      expect(await run(['resend', '--team', 'billing', 'order-42', '--reason', 'fixed', '--yes'], c.io)).toBe(0);
      const recordId = idempotencyRecordId(pipeline.outputs.IdempotencyKeyPrefix!, 'billing#order-42');
      const of = (name: string) => pipeline.sent.filter((s) => s.name === name).map((s) => s.input);
      expect(of('GetCommand')).toEqual([expect.objectContaining({ Key: { id: recordId } })]);
      expect(of('DeleteCommand')).toEqual([expect.objectContaining({ Key: { id: recordId } })]);
      expect(of('UpdateCommand')).toEqual([
        expect.objectContaining({ Key: { [LEDGER_TABLE.partitionKey]: ledgerKey('billing#order-42') } }),
      ]);
      // Only the team's dead letter goes back; the bare key's and another team's stay.
      expect(of('DeleteMessageCommand')).toEqual([
        { QueueUrl: pipeline.outputs.DeadLetterQueueUrl, ReceiptHandle: 'r-billing#order-42' },
      ]);
      expect(of('SendMessageCommand')).toHaveLength(1);
      expect(c.out[0]).toMatch(/^Released billing#order-42 on the local pipeline .*: fixed$/);
      expect(c.out[1]).toBe(
        'Redrove 1 dead letter(s) of billing#order-42: it is sent again (email-pipeline status --team billing order-42 follows it).',
      );
    });

    test("--json names the team's key", async () => {
      answering([]);
      const c = capture();
      expect(await run(['resend', '--team', 'billing', 'order-42', '--reason', 'fixed', '--yes', '--json'], c.io)).toBe(
        0,
      );
      expect(JSON.parse(c.out[0]!)).toMatchObject({ key: 'billing#order-42', released: 'completed', redriven: 0 });
    });

    test("a dry run says it would release the team's key and changes nothing", async () => {
      answering(['billing#order-42']);
      const c = capture();
      expect(await run(['resend', '--team', 'billing', 'order-42', '--reason', 'fixed', '--dry-run'], c.io)).toBe(0);
      expect(c.out.join('\n')).toMatch(/^Would release billing#order-42 on .* then redrive its 1 dead letter\(s\)\./);
      expect(pipeline.sent.map((s) => s.name)).not.toContain('DeleteCommand');
      expect(pipeline.sent.map((s) => s.name)).not.toContain('SendMessageCommand');
    });
  });
});
