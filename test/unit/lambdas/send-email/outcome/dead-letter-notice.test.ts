/**
 * The send function's notice of a dead letter to the callbacks queue: only for a target with a
 * callback, as a report the callback function reads (the exact SendMessage shape), never failing
 * the dead letter it follows.
 */
import type { SendMessageCommand } from '@aws-sdk/client-sqs';
import {
  createDeadLetterNotice,
  readNoticeSettings,
} from '../../../../../lambdas/send-email/outcome/dead-letter-notice';
import { CALLBACK_ENV } from '../../../../../lambdas/kernel/callbacks/names';
import { ledgerKey } from '../../../../../lambdas/kernel/ledger/schema';

function fakeSqs(fail = false) {
  const sent: SendMessageCommand['input'][] = [];
  return {
    sent,
    send: async (command: SendMessageCommand) => {
      if (fail) throw new Error('SQS is down');
      sent.push(command.input);
      return {};
    },
  };
}

const warnings: unknown[] = [];
const logger = { warn: (...args: unknown[]) => void warnings.push(args) };

test('a team key with a callback: the report names the team, its own key and the error code', async () => {
  const sqs = fakeSqs();
  const notice = createDeadLetterNotice({
    settings: { queueUrl: 'https://q', targets: ['billing'] },
    sqs: sqs as never,
    teamNames: ['billing', 'security'],
    logger,
  });
  await notice('billing#order-42', 'InvalidMessage', '2026-12-04T10:00:00.000Z', 7);
  await notice('security#order-42', 'InvalidMessage', '2026-12-04T10:00:00.000Z', 3);
  await notice('order-42', 'InvalidMessage', '2026-12-04T10:00:00.000Z', 1);
  expect(sqs.sent).toHaveLength(1);
  const [input] = sqs.sent;
  expect(JSON.parse(input!.MessageBody!)).toEqual({
    key: ledgerKey('billing#order-42'),
    status: 'dead-lettered',
    events: [{ type: 'DeadLettered', at: '2026-12-04T10:00:00.000Z', detail: 'InvalidMessage' }],
    updatedAt: '2026-12-04T10:00:00.000Z',
    team: 'billing',
    teamKey: 'order-42',
    sequence: 7,
  });
  expect(input!.MessageAttributes).toEqual({
    status: { DataType: 'String', StringValue: 'dead-lettered' },
    'idempotency-key': { DataType: 'String', StringValue: ledgerKey('billing#order-42') },
    team: { DataType: 'String', StringValue: 'billing' },
  });
});

test("the pipeline's own callback (*) hears a bare key; a failed notice is logged, not thrown", async () => {
  const sqs = fakeSqs();
  const notice = createDeadLetterNotice({
    settings: { queueUrl: 'https://q', targets: ['*'] },
    sqs: sqs as never,
    logger,
  });
  await notice('order.42', 'TemplateDoesNotExist', '2026-12-04T10:00:00.000Z', 2);
  expect(JSON.parse(sqs.sent[0]!.MessageBody!)).toMatchObject({ key: ledgerKey('order.42'), status: 'dead-lettered' });
  const broken = createDeadLetterNotice({
    settings: { queueUrl: 'https://q', targets: ['*'] },
    sqs: fakeSqs(true) as never,
    logger,
  });
  await expect(broken('order-1', 'X', '2026-12-04T10:00:00.000Z', 1)).resolves.toBeUndefined();
  expect(JSON.stringify(warnings)).toContain('could not tell the callback of a dead letter');
});

test('settings: both variables, or no notices', () => {
  expect(readNoticeSettings({ [CALLBACK_ENV.queueUrl]: 'https://q', [CALLBACK_ENV.targetNames]: '*,billing' })).toEqual(
    {
      queueUrl: 'https://q',
      targets: ['*', 'billing'],
    },
  );
  expect(readNoticeSettings({ [CALLBACK_ENV.queueUrl]: 'https://q' })).toBeUndefined();
  expect(readNoticeSettings({})).toBeUndefined();
});
