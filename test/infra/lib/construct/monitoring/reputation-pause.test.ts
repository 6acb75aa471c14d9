/** The reputation pause function as synthesized: the bundled handler, told which configuration set to pause. */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { assetDir, ASSET_FILE } from '../../../../../lib/construct/assets';
import { synthesize } from '../../../helpers';

test('runs the bundled handler of lambdas/reputation-pause, not code inlined in the template', () => {
  const s = synthesize({}, undefined, { monitoring: { pauseSendingOnReputation: true } });
  const fn = s.stack.monitoring!.pauseFunction!;
  const id = s.stack.getLogicalId(fn.node.defaultChild as never);
  const properties = s.template.toJSON().Resources[id].Properties;

  expect(properties.Code.ZipFile).toBeUndefined();
  expect(properties.Code.S3Key).toBeDefined();
  expect(properties.Handler).toBe('index.handler');
  expect(properties.Environment.Variables).toEqual({
    CONFIGURATION_SET_NAME: s.stack.resolve(s.stack.pipeline.ledger.configurationSetName),
  });
  const bundle = path.join(assetDir('reputation-pause'), ASSET_FILE);
  expect(existsSync(bundle)).toBe(true);
  expect(readFileSync(bundle, 'utf8')).toContain('PutConfigurationSetSendingOptions');
});
