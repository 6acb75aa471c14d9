/** `npm start`'s context: cdk.json's, with CDK_CONTEXT_JSON over it as the CDK CLI passes context to an app. */
import { environmentContext } from '../../../../../tools/dev/local/settings';

test('CDK_CONTEXT_JSON is read as an object of context keys; absent or blank is none', () => {
  expect(environmentContext({ CDK_CONTEXT_JSON: '{"emailPipeline:callbackUrl":"http://127.0.0.1:9/h"}' })).toEqual({
    'emailPipeline:callbackUrl': 'http://127.0.0.1:9/h',
  });
  expect(environmentContext({})).toEqual({});
  expect(environmentContext({ CDK_CONTEXT_JSON: ' ' })).toEqual({});
});

test.each(['not json', '[1]', '"x"'])('CDK_CONTEXT_JSON=%s is refused, saying what it must be', (text) => {
  expect(() => environmentContext({ CDK_CONTEXT_JSON: text })).toThrow('CDK_CONTEXT_JSON must be a JSON object');
});
