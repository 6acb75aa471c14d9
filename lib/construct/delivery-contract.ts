/**
 * The delivery contract, checked on what will actually be deployed: the
 * queue's SNS subscription keeps the envelope (no raw message delivery) and its
 * event source mapping reports batch item failures (a queue a rule feeds: the
 * mapping only). Added as a construct
 * validation by every pipeline function fed by such a queue.
 */
import { CfnResource, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { IConstruct, IValidation } from 'constructs';

/** A CloudFormation resource as synthesized, overrides included. */
interface SynthesizedResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

/**
 * Re-checks the delivery contract on what will actually be deployed: an
 * escape hatch (addPropertyOverride and friends) could turn raw message
 * delivery on or batch item failure reporting off after the L2 set them.
 */
export class DeliveryContractValidation implements IValidation {
  /**
   * @param scope a construct of the stack to check
   * @param queue the queue whose subscription and event source mapping are checked
   * @param options `fedBy: 'rule'` for a queue an EventBridge rule feeds (the ledger's buffer):
   *   no SNS subscription is expected, only the mappings' batch item failure reporting
   */
  constructor(
    private readonly scope: IConstruct,
    private readonly queue: sqs.IQueue,
    private readonly options: { readonly fedBy: 'topic' | 'rule' } = { fedBy: 'topic' },
  ) {}

  public validate(): string[] {
    const stack = Stack.of(this.scope);
    const queueArn = JSON.stringify(stack.resolve(this.queue.queueArn));
    const errors: string[] = [];
    let subscriptions = 0;
    let mappings = 0;

    for (const child of stack.node.findAll()) {
      const resource = synthesized(stack, child);
      if (resource === undefined) continue;
      const p = resource.Properties ?? {};
      if (resource.Type === 'AWS::SNS::Subscription' && JSON.stringify(p.Endpoint) === queueArn) {
        subscriptions++;
        if (isTrue(p.RawMessageDelivery)) {
          errors.push(
            `rawMessageDelivery=${JSON.stringify(p.RawMessageDelivery)} on the subscription ${child.node.path}: ` +
              'raw message delivery must stay off, the handler needs the SNS envelope (its MessageId is the dedupe key)',
          );
        }
      }
      if (resource.Type === 'AWS::Lambda::EventSourceMapping' && JSON.stringify(p.EventSourceArn) === queueArn) {
        mappings++;
        const types = p.FunctionResponseTypes;
        if (!Array.isArray(types) || !types.includes('ReportBatchItemFailures')) {
          errors.push(
            `reportBatchItemFailures is off (FunctionResponseTypes=${JSON.stringify(types ?? null)}) on ${child.node.path}: ` +
              'batch item failure reporting must be on, or one failed message retries (and may resend) the whole batch',
          );
        }
      }
    }
    if (subscriptions === 0 && this.options.fedBy === 'topic') {
      errors.push('the queue has no SNS subscription: the pipeline needs its topic subscribed to the queue');
    }
    if (mappings === 0) {
      errors.push(
        'the queue has no event source mapping: reportBatchItemFailures must be on a mapping to the function',
      );
    }
    return errors;
  }
}

const CHECKED_TYPES = new Set(['AWS::SNS::Subscription', 'AWS::Lambda::EventSourceMapping']);

/** The resource as it will be synthesized (raw overrides applied), or undefined if it is not one we check. */
function synthesized(stack: Stack, c: IConstruct): SynthesizedResource | undefined {
  if (!CfnResource.isCfnResource(c) || !CHECKED_TYPES.has(c.cfnResourceType)) return undefined;
  const rendered = stack.resolve(c._toCloudFormation()) as { Resources?: Record<string, SynthesizedResource> };
  return Object.values(rendered.Resources ?? {})[0];
}

function isTrue(v: unknown): boolean {
  return v === true || (typeof v === 'string' && v.toLowerCase() === 'true');
}
