/**
 * The message attributes the send function writes on a dead letter or a retry copy
 * (lambdas/send-email/outcome/queue-record.ts): SQS refuses a whole SendMessage for one character it does
 * not take, so a reason that quotes a hostile field name must still be writable.
 */
import { attr } from '../../../../../lambdas/send-email/outcome/queue-record';

test('characters SQS refuses (C0 controls, U+FFFE, U+FFFF, a lone surrogate) are written as \\uXXXX', () => {
  expect(attr('\u0000x\u001b[2J: is not a known field \uffff\ufffe \ud800').StringValue).toBe(
    '\\u0000x\\u001b[2J: is not a known field \\uffff\\ufffe \\ud800',
  );
});

test('tab, line breaks, non-ASCII text and paired surrogates are kept as they are', () => {
  const text = 'line 1\r\n\tGrüße 👋 \u202e';

  expect(attr(text)).toEqual({ DataType: 'String', StringValue: text });
});
