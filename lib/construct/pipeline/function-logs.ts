/**
 * Where the pipeline's three functions log: their log groups' names, fixed at
 * synth (`/email-pipeline/<unique id of the pipeline>/<function>`), the key
 * that encrypts them (usable by CloudWatch Logs for these names only), and the
 * send function's log group. The ledger creates its functions' groups itself; the name of the SES
 * tenants' status log group (tenant-status.ts) is fixed here too, when a team has a tenant.
 */
import { ArnFormat, Names, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { ResolvedSettings } from '../../settings';
import { configuredCallbacks } from '../../settings/callbacks';
import { rotatingKey } from '../common/keys';

/** The log group names of the pipeline's functions. */
export interface LogGroupNames {
  readonly send: string;
  readonly ledger: string;
  readonly status: string;
  /** The callback function's, only when a callback is configured. */
  readonly callbacks?: string;
  /** The SES tenants' status events (tenant-status.ts), only when a team has a tenant. */
  readonly tenantStatus?: string;
}

/** What {@link buildFunctionLogs} made. */
export interface FunctionLogs {
  /** The names of the functions' log groups (send, ledger, status; callbacks when configured). */
  readonly logGroupNames: LogGroupNames;
  /** Encrypts the three log groups; undefined with `encryptLogs: false`. */
  readonly logsKey?: kms.Key;
  /** The send function's log group. */
  readonly logGroup: logs.LogGroup;
}

/** The names, the key (unless turned off) and the send function's log group, in `scope` (the pipeline). */
export function buildFunctionLogs(
  scope: Construct,
  props: {
    readonly settings: ResolvedSettings;
    readonly removalPolicy: RemovalPolicy;
    readonly encryptLogs: boolean;
  },
): FunctionLogs {
  // The log groups' names are fixed here (not generated) so that the logs key's policy can name
  // them: a name taken from the log group itself would make the key and the group depend on each other.
  const logGroupPrefix = `/email-pipeline/${Names.uniqueResourceName(scope, { maxLength: 64, separator: '-' })}`;
  const logGroupNames: LogGroupNames = {
    send: `${logGroupPrefix}/send-email`,
    ledger: `${logGroupPrefix}/ledger`,
    status: `${logGroupPrefix}/status`,
    // Named only with callbacks: a pipeline without them keeps its logs key's policy as it was.
    ...(Object.keys(configuredCallbacks(props.settings)).length > 0
      ? { callbacks: `${logGroupPrefix}/callbacks` }
      : {}),
    // Likewise only when a team has an SES tenant.
    ...(Object.values(props.settings.teams ?? {}).some((team) => team.sesTenant)
      ? { tenantStatus: `${logGroupPrefix}/tenant-status` }
      : {}),
  };
  const logsKey = props.encryptLogs ? buildLogsKey(scope, logGroupNames, props.removalPolicy) : undefined;
  const logGroup = new logs.LogGroup(scope, 'FunctionLogs', {
    logGroupName: logGroupNames.send,
    retention: props.settings.logRetentionDays as logs.RetentionDays,
    removalPolicy: props.removalPolicy,
    ...(logsKey ? { encryptionKey: logsKey } : {}),
  });
  return { logGroupNames, ...(logsKey ? { logsKey } : {}), logGroup };
}

/**
 * The logs key. CloudWatch Logs may use it for the pipeline's own log groups only, by name: not
 * for any other log group of the account, which could otherwise be encrypted (and its reading
 * tied) to this key.
 */
function buildLogsKey(scope: Construct, logGroupNames: LogGroupNames, removalPolicy: RemovalPolicy): kms.Key {
  const stack = Stack.of(scope);
  const logsKey = rotatingKey(scope, 'LogsKey', "Encrypts the email pipeline functions' logs", removalPolicy);
  logsKey.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchLogsUseKey',
      principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
      actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
      resources: ['*'],
      conditions: {
        ArnEquals: {
          'kms:EncryptionContext:aws:logs:arn': Object.values(logGroupNames).map((name) =>
            stack.formatArn({
              service: 'logs',
              resource: 'log-group',
              resourceName: name,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ),
        },
      },
    }),
  );
  return logsKey;
}
