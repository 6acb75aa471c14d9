/** The CLI's status target, read from stack outputs, and the text it prints for a delivery report. */
import { formatReport, lookupTargetFromOutputs } from '../../../../lib/cli/status-report';

describe('lookupTargetFromOutputs', () => {
  test('takes the tables and the key prefix from the outputs', () => {
    expect(
      lookupTargetFromOutputs(
        { LedgerTableName: 'ledger', TableName: 'idem', IdempotencyKeyPrefix: 'email-pipeline', TopicArn: 'x' },
        'Stack Mail',
      ),
    ).toEqual({ ledgerTableName: 'ledger', idempotencyTableName: 'idem', keyPrefix: 'email-pipeline' });
  });

  test('names every missing output and the source', () => {
    expect(() => lookupTargetFromOutputs({ TableName: 'idem' }, 'Stack Mail')).toThrow(
      'Stack Mail has no LedgerTableName, IdempotencyKeyPrefix outputs: it predates the send ledger',
    );
  });
});

describe('formatReport', () => {
  test('shows the status, the SES message and the timeline, oldest first as given', () => {
    const text = formatReport({
      key: 'order-42',
      status: 'bounced',
      sesMessageId: 'ses-1',
      updatedAt: '2026-12-01T10:00:02.000Z',
      events: [
        { type: 'Send', at: '2026-12-01T10:00:00.000Z' },
        { type: 'Bounce', at: '2026-12-01T10:00:02.000Z', detail: 'Permanent/General' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'order-42: bounced (the email bounced)',
      '  SES message  ses-1',
      '  updated      2026-12-01T10:00:02.000Z',
      '  events',
      '    2026-12-01T10:00:00.000Z  Send',
      '    2026-12-01T10:00:02.000Z  Bounce  Permanent/General',
    ]);
  });

  test('an unknown key says what unknown can mean', () => {
    expect(formatReport({ key: 'nope', status: 'unknown', events: [] })).toBe(
      'nope: unknown (nothing is recorded for this key: never published, not claimed yet, or past the dedupe window)',
    );
  });
});
