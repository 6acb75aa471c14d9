/**
 * Where the send ledger's evidence comes from: the configuration set every send
 * uses (owned, or a given one), its EventBridge destination and the rule that takes
 * SES's events of this configuration set of this account to the ledger's buffer, and
 * the CloudWatch counts of deliveries, bounces and complaints per configuration set
 * for the dashboard.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as ses from 'aws-cdk-lib/aws-ses';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { CONFIGURATION_SET_DIMENSION } from '../../../lambdas/kernel/names';
import { ledgerEventPattern } from '../../../lambdas/kernel/ledger/event-pattern';
import type { ResolvedSettings } from '../../settings';
import { rotatingKey } from '../common/keys';

/** The SES events the ledger records (all but opens, clicks and subscriptions, which say nothing about delivery). */
export const LEDGER_EVENT_TYPES: readonly ses.EmailSendingEvent[] = [
  ses.EmailSendingEvent.SEND,
  ses.EmailSendingEvent.DELIVERY,
  ses.EmailSendingEvent.BOUNCE,
  ses.EmailSendingEvent.COMPLAINT,
  ses.EmailSendingEvent.REJECT,
  ses.EmailSendingEvent.DELIVERY_DELAY,
  ses.EmailSendingEvent.RENDERING_FAILURE,
];

/**
 * The SES events counted in CloudWatch (AWS/SES, by configuration set) for the dashboard and the
 * alarms. Reject (a virus) and Rendering Failure (a template that cannot be rendered with the
 * message's data) happen after SES accepted the send: without these counts a broken template looks
 * like success to every other metric.
 */
export const DELIVERY_METRIC_EVENTS: readonly ses.EmailSendingEvent[] = [
  ses.EmailSendingEvent.DELIVERY,
  ses.EmailSendingEvent.BOUNCE,
  ses.EmailSendingEvent.COMPLAINT,
  ses.EmailSendingEvent.REJECT,
  ses.EmailSendingEvent.RENDERING_FAILURE,
];

/** The AWS/SES metric name of each event the CloudWatch destination counts. */
export const SES_EVENT_METRIC = {
  delivery: 'Delivery',
  bounce: 'Bounce',
  complaint: 'Complaint',
  reject: 'Reject',
  renderingFailure: 'Rendering Failure',
} as const;

export { CONFIGURATION_SET_DIMENSION } from '../../../lambdas/kernel/names';

/** What {@link buildConfigurationSet} made (or found). */
export interface LedgerConfigurationSet {
  /** The configuration set every send uses. */
  readonly configurationSet: ses.IConfigurationSet;
  /** Its name. */
  readonly configurationSetName: string;
  /** The configuration set this construct owns; undefined when the settings name an existing one. */
  readonly ownedConfigurationSet?: ses.ConfigurationSet;
}

/**
 * The configuration set: the one the `configurationSetName` setting names (it then only gains the
 * ledger's event destinations), or a new one with reputation metrics; in `scope` (the ledger).
 */
export function buildConfigurationSet(scope: Construct, settings: ResolvedSettings): LedgerConfigurationSet {
  if (settings.configurationSetName !== undefined) {
    const configurationSet = ses.ConfigurationSet.fromConfigurationSetName(
      scope,
      'GivenConfigurationSet',
      settings.configurationSetName,
    );
    return { configurationSet, configurationSetName: configurationSet.configurationSetName };
  }
  const owned = new ses.ConfigurationSet(scope, 'ConfigurationSet', { reputationMetrics: true });
  return { configurationSet: owned, configurationSetName: owned.configurationSetName, ownedConfigurationSet: owned };
}

/** The key of the delivery-status topic (publishers' subscriptions decrypt through SNS). */
export function buildLedgerTopicKey(scope: Construct, props: { readonly removalPolicy: RemovalPolicy }): kms.Key {
  return rotatingKey(scope, 'TopicKey', 'Encrypts the send ledger delivery-status topic', props.removalPolicy);
}

/**
 * SES's events to the ledger's buffer: the configuration set's event destination for
 * {@link LEDGER_EVENT_TYPES} is EventBridge's default bus (the only bus SES accepts), and a rule on
 * `source: aws.ses`, this account and the configuration set (ledgerEventPattern, shared with the
 * local bus) targets the buffer queue, with the buffer's DLQ for what EventBridge cannot deliver
 * within a day. `aws.ses` is a source no PutEvents caller may use, so only SES can feed the rule;
 * the buffer's policy admits only the rule. Also the CloudWatch destination for
 * {@link DELIVERY_METRIC_EVENTS}; in `scope` (the ledger).
 */
export function buildEventRule(
  scope: Construct,
  props: {
    readonly configurationSet: ses.IConfigurationSet;
    readonly configurationSetName: string;
    readonly bufferQueue: sqs.IQueue;
    readonly bufferDeadLetterQueue: sqs.IQueue;
  },
): events.Rule {
  const { configurationSet } = props;
  const stack = Stack.of(scope);
  const bus = events.EventBus.fromEventBusName(scope, 'DefaultBus', 'default');
  new ses.ConfigurationSetEventDestination(scope, 'EventDestination', {
    configurationSet,
    destination: ses.EventDestination.eventBus(bus),
    events: [...LEDGER_EVENT_TYPES],
  });
  const rule = new events.Rule(scope, 'SesEventsRule', {
    description: "SES's events of the pipeline's configuration set, to the send ledger's buffer",
    eventPattern: ledgerEventPattern(stack.account, props.configurationSetName),
  });
  rule.addTarget(
    new targets.SqsQueue(props.bufferQueue, {
      deadLetterQueue: props.bufferDeadLetterQueue,
      retryAttempts: 185,
      maxEventAge: Duration.hours(24),
    }),
  );
  // Counts for the dashboard and alarms, per configuration set (SES's own auto-tag as the dimension).
  new ses.ConfigurationSetEventDestination(scope, 'MetricsDestination', {
    configurationSet,
    destination: ses.EventDestination.cloudWatchDimensions([
      {
        name: CONFIGURATION_SET_DIMENSION,
        source: ses.CloudWatchDimensionSource.MESSAGE_TAG,
        defaultValue: 'none',
      },
    ]),
    events: [...DELIVERY_METRIC_EVENTS],
  });
  return rule;
}
