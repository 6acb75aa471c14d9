import {
  IdempotencyAlreadyInProgressError,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
} from '@aws-lambda-powertools/idempotency';
import { classifyIdempotencyError } from '../../../../lambdas/send-email/classify';
import { PermanentError, RetryableError } from '../../../../lambdas/kernel/errors';

describe('classifyIdempotencyError', () => {
  test('the same key with different content is permanent and names the key', () => {
    const failure = classifyIdempotencyError(new IdempotencyValidationError('payload mismatch'), 'order-1');
    expect(failure).toBeInstanceOf(PermanentError);
    expect(failure).toEqual(expect.objectContaining({ code: 'KeyReusedWithDifferentContent' }));
    expect((failure as PermanentError).message).toContain('"order-1"');
  });

  test('a claim held by another attempt is retryable', () => {
    const failure = classifyIdempotencyError(new IdempotencyAlreadyInProgressError('busy'), 'k');
    expect(failure).toBeInstanceOf(RetryableError);
    expect(failure).toEqual(expect.objectContaining({ code: 'InProgress' }));
  });

  test('a store that cannot take the claim is retryable, with the cause in the reason', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED'), { name: 'TimeoutError' });
    const failure = classifyIdempotencyError(
      new IdempotencyPersistenceLayerError('Failed to save in progress record to idempotency store', { cause }),
      'k',
    );
    expect(failure).toBeInstanceOf(RetryableError);
    expect(failure).toEqual(expect.objectContaining({ code: 'StoreUnavailable' }));
    expect((failure as RetryableError).message).toContain('TimeoutError: connect ECONNREFUSED');
  });

  test('a failed completion write after the send is told apart (retrying it would send twice)', () => {
    const failure = classifyIdempotencyError(
      new IdempotencyPersistenceLayerError('Failed to update success record to idempotency store'),
      'k',
    );
    expect(failure).toBe('completion-write-failed');
  });

  test('a claim that could not be released after a failed send is retried, and is not a store outage (no fail-open send)', () => {
    const failure = classifyIdempotencyError(
      new IdempotencyPersistenceLayerError('Failed to delete record from idempotency store'),
      'k',
    );
    expect(failure).toBeInstanceOf(RetryableError);
    expect(failure).toEqual(expect.objectContaining({ code: 'ClaimReleaseFailed' }));
  });

  test('anything unexpected is retried, not dropped', () => {
    const failure = classifyIdempotencyError(new TypeError('boom'), 'k');
    expect(failure).toBeInstanceOf(RetryableError);
    expect(failure).toEqual(expect.objectContaining({ code: 'Unexpected' }));
  });
});
