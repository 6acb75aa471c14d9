/** The callback function's settings: read from its environment, each error naming the variable. */
import { readCallbackSettings } from '../../../../lambdas/callbacks/settings';
import { CALLBACK_ENV } from '../../../../lambdas/kernel/callbacks/names';

const env = {
  [CALLBACK_ENV.tableName]: 'callbacks',
  [CALLBACK_ENV.queueUrl]: 'https://sqs/q',
  [CALLBACK_ENV.deadLetterQueueUrl]: 'https://sqs/dlq',
  [CALLBACK_ENV.targets]: JSON.stringify({ '*': { url: 'https://h.example.com/', secretArn: 'arn:x' } }),
  [CALLBACK_ENV.retryBaseSeconds]: '30',
  [CALLBACK_ENV.retryWindowSeconds]: '86400',
  [CALLBACK_ENV.timeoutMs]: '15000',
};

test('reads every setting; private addresses only when said so', () => {
  expect(readCallbackSettings(env)).toEqual({
    tableName: 'callbacks',
    queueUrl: 'https://sqs/q',
    deadLetterQueueUrl: 'https://sqs/dlq',
    targets: { '*': { url: 'https://h.example.com/', secretArn: 'arn:x' } },
    retryBaseSeconds: 30,
    retryWindowSeconds: 86_400,
    timeoutMs: 15_000,
    allowPrivateAddresses: false,
  });
  expect(readCallbackSettings({ ...env, [CALLBACK_ENV.allowPrivateAddresses]: 'true' }).allowPrivateAddresses).toBe(
    true,
  );
});

test.each([
  ['not json', 'is not JSON'],
  ['[]', 'must be a JSON object'],
  [JSON.stringify({ '*': { url: 'https://h/' } }), 'needs a url and one of secretArn or secret'],
  [
    JSON.stringify({ '*': { url: 'https://h/', secret: 's', secretArn: 'a' } }),
    'needs a url and one of secretArn or secret',
  ],
])('targets %s are refused', (targets, why) => {
  expect(() => readCallbackSettings({ ...env, [CALLBACK_ENV.targets]: targets })).toThrow(why);
});

test('a missing variable is named', () => {
  const { [CALLBACK_ENV.queueUrl]: _gone, ...rest } = env;
  void _gone;
  expect(() => readCallbackSettings(rest)).toThrow(CALLBACK_ENV.queueUrl);
});
