/**
 * Where the sending status of the teams' SES tenants (team-tenants.ts) shows. SES sends `Sending
 * Status Disabled` and `Sending Status Enabled` events (source `aws.ses`) to the account's default
 * bus when a sending status changes (EventBridge events reference, "Amazon SES events"); a tenant
 * is paused by SES, not the whole account, when its reputation policy trips.
 *
 * Two rules on the default bus, one per status, match these events for this pipeline's tenants
 * only (tenantStatusEventPattern): `aws.ses` is a source no PutEvents caller may use, the account
 * is the stack's, and `resources` must hold one of the pipeline's tenant ARNs. Each matching event
 * is kept whole in a log group (`/email-pipeline/<pipeline>/tenant-status`, a CloudWatch Logs
 * resource policy letting only these two rules write there), and EventBridge counts each rule's
 * matches (`AWS/Events` `TriggeredRules` by `RuleName`), which the `sesTenantPaused` warning and
 * the dashboard read. Built only when a team has a tenant: without one the template is as it was.
 */
import { ArnFormat, Names, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as ses from 'aws-cdk-lib/aws-ses';
import type { Construct } from 'constructs';

/** The event source of SES's own events: reserved to AWS, no PutEvents caller may use it. */
export const SES_SOURCE = 'aws.ses';

/** SES's detail-types for a sending status change (EventBridge events reference, "Amazon SES events"). */
export const SENDING_STATUS_DETAIL_TYPES = {
  paused: 'Sending Status Disabled',
  resumed: 'Sending Status Enabled',
} as const;

/** A status change the rules tell apart. */
export type TenantStatusChange = keyof typeof SENDING_STATUS_DETAIL_TYPES;

/**
 * The rule's event pattern (EventBridge's JSON pattern language: each leaf lists the values that
 * match): SES's own event of `change`, on `accountId`, naming one of `tenantArns` in `resources`.
 */
export function tenantStatusEventPattern(
  accountId: string,
  tenantArns: readonly string[],
  change: TenantStatusChange,
): { source: string[]; account: string[]; 'detail-type': string[]; resources: string[] } {
  return {
    source: [SES_SOURCE],
    account: [accountId],
    'detail-type': [SENDING_STATUS_DETAIL_TYPES[change]],
    resources: [...tenantArns],
  };
}

/** What {@link buildTenantStatus} made. */
export interface TenantStatusEvents {
  /** The rule of each status change (`paused`: SES disabled a tenant's sending; `resumed`: enabled it). */
  readonly rules: Readonly<Record<TenantStatusChange, events.Rule>>;
  /** Every matching event, whole. */
  readonly logGroup: logs.LogGroup;
}

/** How many matches of `rule` EventBridge counted (`AWS/Events` `TriggeredRules`, default bus). */
export function ruleMatches(rule: events.IRule, options: cw.MetricOptions = {}): cw.Metric {
  return new cw.Metric({
    namespace: 'AWS/Events',
    metricName: 'TriggeredRules',
    dimensionsMap: { RuleName: rule.ruleName },
    statistic: cw.Stats.SUM,
    ...options,
  });
}

/** The rules and the log group, in `scope` (the pipeline); undefined when no team has a tenant. */
export function buildTenantStatus(
  scope: Construct,
  props: {
    readonly tenants: Readonly<Record<string, ses.CfnTenant>>;
    /** The log group's name (function-logs.ts names it, so that the logs key's policy can). */
    readonly logGroupName: string;
    readonly logRetentionDays: number;
    readonly removalPolicy: RemovalPolicy;
    /** Encrypts the log group (the pipeline's logs key, whose policy names it). @default none */
    readonly logsKey?: kms.IKey;
  },
): TenantStatusEvents | undefined {
  const tenantArns = Object.values(props.tenants).map((tenant) => tenant.attrArn);
  if (tenantArns.length === 0) return undefined;
  const stack = Stack.of(scope);
  const logGroup = new logs.LogGroup(scope, 'TenantStatusLogs', {
    logGroupName: props.logGroupName,
    retention: props.logRetentionDays as logs.RetentionDays,
    removalPolicy: props.removalPolicy,
    ...(props.logsKey ? { encryptionKey: props.logsKey } : {}),
  });
  const target: events.IRuleTarget = {
    bind: () => ({
      arn: stack.formatArn({
        service: 'logs',
        resource: 'log-group',
        resourceName: logGroup.logGroupName,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    }),
  };
  const rule = (change: TenantStatusChange, id: string, what: string) => {
    const made = new events.Rule(scope, id, {
      description: `SES ${what} sending for a team's SES tenant of the email pipeline`,
      eventPattern: tenantStatusEventPattern(stack.account, tenantArns, change),
    });
    made.addTarget(target);
    Validations.of(made).acknowledge({
      id: 'Serverless::Serverless-EventBusDLQ',
      reason:
        'The alarm and the dashboard read the rule’s own count of matches (TriggeredRules), not the log group, so a ' +
        'write EventBridge could not make loses no warning; the status itself is read from SES (GetTenant, ' +
        'email-pipeline verify). A DLQ would need its own watching.',
    });
    return made;
  };
  const rules = {
    paused: rule('paused', 'TenantSendingPausedRule', 'disabled'),
    resumed: rule('resumed', 'TenantSendingResumedRule', 'enabled'),
  };
  // EventBridge writes to CloudWatch Logs under the account's logs resource policy: this one lets
  // only the two rules above write, and only to this log group.
  new logs.CfnResourcePolicy(scope, 'TenantStatusLogsPolicy', {
    policyName: `${Names.uniqueResourceName(scope, { maxLength: 200, separator: '-' })}-tenant-status`,
    policyDocument: stack.toJsonString({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'TenantStatusRulesWrite',
          Effect: 'Allow',
          Principal: { Service: 'events.amazonaws.com' },
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: logGroup.logGroupArn,
          Condition: { ArnEquals: { 'aws:SourceArn': [rules.paused.ruleArn, rules.resumed.ruleArn] } },
        },
      ],
    }),
  });
  return { rules, logGroup };
}
