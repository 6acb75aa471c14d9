import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SettingsError } from '../../../../lib/settings';
import { CfnResource, Names } from 'aws-cdk-lib';
import type { EmailPipelineStack } from '../../../../lib/construct/email-pipeline-stack';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { findCfn, synth, synthDefault } from '../../helpers';

/** One of the send function's event source mappings (it has one per lane): the work queue's, or the high lane's. */
function mappingOf(stack: EmailPipelineStack, index: 0 | 1): CfnResource {
  const mappings = stack.pipeline.sendFunction.node
    .findAll()
    .filter(
      (c): c is CfnResource => CfnResource.isCfnResource(c) && c.cfnResourceType === 'AWS::Lambda::EventSourceMapping',
    );
  expect(mappings).toHaveLength(2);
  return mappings[index]!;
}
const firstMapping = (stack: EmailPipelineStack) => mappingOf(stack, 0);

/** The error a synth throws, so a test can assert on its message. */
function synthError(...args: Parameters<typeof synth>): Error {
  try {
    synth(...args);
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected the synth to fail, but it succeeded');
}

describe('synth-time invariants', () => {
  test('a visibility timeout under 6 x the function timeout fails the synth', () => {
    const error = synthError({ functionTimeoutSeconds: 30, visibilityTimeoutSeconds: 179 });
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toContain('visibilityTimeoutSeconds=179');
    expect(error.message).toContain('6 x functionTimeoutSeconds (180)');
  });

  test('a dedupe window shorter than retention + retry budget + DLQ retention fails the synth', () => {
    const error = synthError({ retentionPeriodSeconds: 86_400, dedupeWindowSeconds: 86_400 });
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toContain('dedupeWindowSeconds=86400');
    expect(error.message).toContain(
      'the queue retention plus the retry budget plus the DLQ retention plus the schedule horizon (86400 + 86400 + 1209600 + maxScheduleAheadSeconds=86400 = 1468800)',
    );
  });

  test('with allowShortDedupeWindow, a dedupe window shorter than the retention period still fails the synth', () => {
    const error = synthError({
      retentionPeriodSeconds: 86_400,
      dedupeWindowSeconds: 86_399,
      allowShortDedupeWindow: true,
    });
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toContain('retentionPeriodSeconds=86400');
  });

  test('maxReceiveCount under 5 fails the synth', () => {
    const error = synthError({ maxReceiveCount: 4 });
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toContain('maxReceiveCount=4');
    expect(error.message).toContain('at least 5');
  });

  test('raw message delivery turned on through an escape hatch fails the synth', () => {
    const error = synthError({}, (stack) => {
      findCfn(stack.pipeline.queue, 'AWS::SNS::Subscription').addPropertyOverride('RawMessageDelivery', true);
    });
    expect(error.message).toContain('rawMessageDelivery=true');
    expect(error.message).toContain('raw message delivery must stay off');
  });

  test('raw message delivery set on the L1 property fails the synth', () => {
    const error = synthError({}, (stack) => {
      (findCfn(stack.pipeline.queue, 'AWS::SNS::Subscription') as sns.CfnSubscription).rawMessageDelivery = true;
    });
    expect(error.message).toContain('rawMessageDelivery=true');
  });

  test('batch item failure reporting turned off through an escape hatch fails the synth', () => {
    const error = synthError({}, (stack) => {
      firstMapping(stack).addPropertyOverride('FunctionResponseTypes', []);
    });
    expect(error.message).toContain('reportBatchItemFailures is off (FunctionResponseTypes=[])');
    expect(error.message).toContain('batch item failure reporting must be on');
  });

  test("batch item failure reporting turned off on the high-priority queue's mapping fails the synth too", () => {
    const error = synthError({}, (stack) => {
      mappingOf(stack, 1).addPropertyOverride('FunctionResponseTypes', []);
    });
    expect(error.message).toContain('reportBatchItemFailures is off (FunctionResponseTypes=[])');
  });

  test('batch item failure reporting removed from the L1 property fails the synth', () => {
    const error = synthError({}, (stack) => {
      (firstMapping(stack) as lambda.CfnEventSourceMapping).functionResponseTypes = undefined;
    });
    expect(error.message).toContain('reportBatchItemFailures is off (FunctionResponseTypes=null)');
  });

  test('the ledger buffer needs no SNS subscription (SES events come by EventBridge), and a raw one added to it still fails', () => {
    expect(() => synthDefault()).not.toThrow();
    const error = synthError({}, (stack) => {
      const topic = new sns.Topic(stack, 'Extra');
      topic.addSubscription(new SqsSubscription(stack.pipeline.ledger.bufferQueue, { rawMessageDelivery: true }));
    });
    expect(error.message).toContain('rawMessageDelivery=true on the subscription EmailPipeline/');
  });

  test('batch item failure reporting turned off on the ledger function fails the synth too', () => {
    const error = synthError({}, (stack) => {
      // The buffer's mapping (the function's other one reads the ledger DLQ).
      const buffer = stack.pipeline.ledger.ledgerFunction.node.findChild(
        `SqsEventSource:${Names.nodeUniqueId(stack.pipeline.ledger.bufferQueue.node)}`,
      );
      findCfn(buffer, 'AWS::Lambda::EventSourceMapping').addPropertyOverride('FunctionResponseTypes', []);
    });
    expect(error.message).toMatch(
      /reportBatchItemFailures is off \(FunctionResponseTypes=\[\]\) on EmailPipeline\/Pipeline\/Ledger\//,
    );
  });

  test('a log retention CloudWatch Logs does not accept fails the synth', () => {
    const error = synthError({ logRetentionDays: 2 });
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toContain('logRetentionDays=2');
  });

  test('an SES timeout over half the function timeout fails the synth', () => {
    const error = synthError({ functionTimeoutSeconds: 10, sesTimeoutMs: 6000 });
    expect(error).toBeInstanceOf(SettingsError);
    expect(error.message).toContain('sesTimeoutMs=6000');
  });

  test('the default settings synthesize', () => {
    expect(() => synth()).not.toThrow();
  });
});
