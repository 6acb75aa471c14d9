/**
 * Where the send ledger's evidence comes from: the configuration set every send
 * uses (owned, or a given one), the encrypted events topic SES publishes to (for
 * this configuration set of this account only), and the CloudWatch counts of
 * deliveries, bounces and complaints per configuration set for the dashboard.
 */
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as ses from 'aws-cdk-lib/aws-ses';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { CONFIGURATION_SET_DIMENSION } from '../../../lambdas/kernel/names';
import type { ResolvedSettings } from '../../settings';
import { rotatingKey } from '../shared';

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

/**
 * The key of both ledger topics (SES events, delivery status). SES may use it to publish events to
 * the encrypted topic, for this configuration set of this account only: the same conditions as the
 * topic policy the event destination adds for sns:Publish. Without them, SES sending for any
 * configuration set of any account could use the key.
 */
export function buildLedgerTopicKey(
  scope: Construct,
  props: { readonly configurationSetName: string; readonly removalPolicy: RemovalPolicy },
): kms.Key {
  const stack = Stack.of(scope);
  const topicKey = rotatingKey(
    scope,
    'TopicKey',
    'Encrypts the send ledger topics (SES events, delivery status)',
    props.removalPolicy,
  );
  topicKey.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'SesPublishesEvents',
      principals: [new iam.ServicePrincipal('ses.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: {
        StringEquals: {
          'aws:SourceAccount': stack.account,
          'aws:SourceArn': stack.formatArn({
            service: 'ses',
            resource: 'configuration-set',
            resourceName: props.configurationSetName,
          }),
        },
      },
    }),
  );
  return topicKey;
}

/**
 * The events topic, with the configuration set's event destination for {@link LEDGER_EVENT_TYPES},
 * and the CloudWatch destination for {@link DELIVERY_METRIC_EVENTS}; in `scope` (the ledger).
 */
export function buildEventsTopic(
  scope: Construct,
  props: { readonly topicKey: kms.IKey; readonly configurationSet: ses.IConfigurationSet },
): sns.Topic {
  const { configurationSet } = props;
  const eventsTopic = new sns.Topic(scope, 'EventsTopic', { masterKey: props.topicKey, enforceSSL: true });
  new ses.ConfigurationSetEventDestination(scope, 'EventDestination', {
    configurationSet,
    destination: ses.EventDestination.snsTopic(eventsTopic),
    events: [...LEDGER_EVENT_TYPES],
  });
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
  return eventsTopic;
}
