/**
 * The send function's `sent` log line: every field it had, plus the send's attempt id and the
 * age since the message first reached the queue (the retry budget's clock, across retries).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { RETRY_ATTRIBUTE } from '../../../../../lambdas/kernel/names';
import type { ParsedRecord } from '../../../../../lambdas/send-email/parse';
import { createReport } from '../../../../../lambdas/send-email/outcome/report';
import { sqsRecord } from '../../../helpers';

const NOW = Date.parse('2026-12-03T10:00:00Z');

function harness() {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const logger = {
    info: (message: string, fields: Record<string, unknown>) => lines.push({ level: 'info', message, fields }),
    warn: (message: string, fields: Record<string, unknown>) => lines.push({ level: 'warn', message, fields }),
  } as unknown as Logger;
  const metrics = { addMetric: () => undefined } as unknown as Metrics;
  return { lines, report: createReport(logger, metrics, () => NOW) };
}

const parsed = {
  key: 'order-42',
  keySource: 'attribute',
  snsMessageId: 'sns-1',
  email: { to: ['ada@example.com'] },
} as unknown as ParsedRecord;

test('a first copy: attempt id and the age since SentTimestamp, beside every field the line had', () => {
  const { lines, report } = harness();
  report.sent(sqsRecord({ sentAt: NOW - 2_500 }), parsed, {
    sesMessageId: 'ses-1',
    sentAt: 'x',
    attemptId: 'a1b2',
  } as never);
  expect(lines).toEqual([
    {
      level: 'info',
      message: 'sent',
      fields: {
        decision: 'sent',
        sqsMessageId: 'm-1',
        receiveCount: 1,
        dedupeKey: 'order-42',
        keySource: 'attribute',
        snsMessageId: 'sns-1',
        to: [expect.any(String)],
        sesMessageId: 'ses-1',
        attemptId: 'a1b2',
        ageSeconds: 2.5,
      },
    },
  ]);
});

test('a retried copy counts from the first enqueue, not from the copy; a bare message id still works', () => {
  const { lines, report } = harness();
  const retried = sqsRecord({
    sentAt: NOW - 1_000,
    messageAttributes: { [RETRY_ATTRIBUTE.firstEnqueuedAt]: String(NOW - 3_600_000), [RETRY_ATTRIBUTE.attempt]: '3' },
  });
  report.sent(retried, parsed, 'ses-2', { failOpen: true });
  expect(lines[0]).toMatchObject({
    level: 'warn',
    fields: { sesMessageId: 'ses-2', ageSeconds: 3600, failOpen: true },
  });
  expect(lines[0]?.fields).not.toHaveProperty('attemptId');
});
