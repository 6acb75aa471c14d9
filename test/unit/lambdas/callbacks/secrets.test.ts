/** Signing keys: read from the secret's JSON (both keys while rotating), kept five minutes, never shown in an error. */
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { keysOfSecret, SECRET_CACHE_MS, secretsManagerSigningKeys } from '../../../../lambdas/callbacks/secrets';

const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:callbacks-abc';

test('the key, and the previous key while a rotation is under way', () => {
  expect(keysOfSecret('{"key":"k1"}', arn)).toEqual(['k1']);
  expect(keysOfSecret('{"key":"k2","previousKey":"k1"}', arn)).toEqual(['k2', 'k1']);
  expect(keysOfSecret('{"key":"k2","previousKey":""}', arn)).toEqual(['k2']);
});

test.each([undefined, 'not json', '{}', '{"key":""}', '"whsec_x"'])(
  'a secret of %p is refused without its value',
  (text) => {
    expect(() => keysOfSecret(text, arn)).toThrow(`the callback secret ${arn} must be JSON with a "key"`);
  },
);

test('Secrets Manager is asked once per five minutes per secret; a local target gives its own secret', async () => {
  let clock = 0;
  const asked: string[] = [];
  const client = {
    send: async (command: GetSecretValueCommand) => {
      asked.push(String(command.input.SecretId));
      return { SecretString: `{"key":"k${asked.length}"}` };
    },
  };
  const keys = secretsManagerSigningKeys(
    {
      billing: { url: 'https://b.example.com/', secretArn: arn },
      '*': { url: 'http://127.0.0.1/', secret: 'whsec_local' },
    },
    client as never,
    () => clock,
  );
  expect(await keys('billing')).toEqual(['k1']);
  clock = SECRET_CACHE_MS - 1;
  expect(await keys('billing')).toEqual(['k1']);
  clock = SECRET_CACHE_MS;
  expect(await keys('billing')).toEqual(['k2']);
  expect(asked).toEqual([arn, arn]);
  expect(await keys('*')).toEqual(['whsec_local']);
  await expect(keys('security')).rejects.toThrow('no callback is configured for "security"');
});
