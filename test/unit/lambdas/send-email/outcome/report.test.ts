/**
 * The send function's `sent` log line: every field it had, plus the send's attempt id and the
 * age since the message first reached the queue (the retry budget's clock, across retries).
 */
import type { SQSRecord } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { RETRY_ATTRIBUTE } from '../../../../../lambdas/kernel/names';
import type { ParsedRecord } from '../../../../../lambdas/send-email/parse';
import { createReport } from '../../../../../lambdas/send-email/outcome/report';

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

function record(attributes: Partial<SQSRecord['attributes']>, messageAttributes: SQSRecord['messageAttributes'] = {}) {
  return {
    messageId: 'm-1',
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(NOW - 2_500), ...attributes },
    messageAttributes,
  } as unknown as SQSRecord;
}

const parsed = {
  key: 'order-42',
  keySource: 'attribute',
  snsMessageId: 'sns-1',
  email: { to: ['ada@example.com'] },
} as unknown as ParsedRecord;

test('a first copy: attempt id and the age since SentTimestamp, beside every field the line had', () => {
  const { lines, report } = harness();
  report.sent(record({}), parsed, { sesMessageId: 'ses-1', sentAt: 'x', attemptId: 'a1b2' } as never);
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
  const retried = record(
    { SentTimestamp: String(NOW - 1_000) },
    {
      [RETRY_ATTRIBUTE.firstEnqueuedAt]: { dataType: 'Number', stringValue: String(NOW - 3_600_000) } as never,
      [RETRY_ATTRIBUTE.attempt]: { dataType: 'Number', stringValue: '3' } as never,
    },
  );
  report.sent(retried, parsed, 'ses-2', { failOpen: true });
  expect(lines[0]).toMatchObject({
    level: 'warn',
    fields: { sesMessageId: 'ses-2', ageSeconds: 3600, failOpen: true },
  });
  expect(lines[0]?.fields).not.toHaveProperty('attemptId');
});
