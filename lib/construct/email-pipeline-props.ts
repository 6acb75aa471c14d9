/**
 * The EmailPipeline construct's props: the pipeline's settings ({@link PipelineSettings}, shared
 * with the local pipeline) and the options only the CDK construct has (principals, removal
 * policy, encryption choices).
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { PipelineSettings } from '../settings';

/**
 * Settings of the pipeline ({@link PipelineSettings}, shared with the local
 * pipeline) plus options that only the CDK construct has.
 */
export interface EmailPipelineProps extends PipelineSettings {
  /**
   * What happens to the stateful resources (idempotency table, function log
   * group, KMS keys) when they leave the stack. With anything but RETAIN the
   * table also loses its deletion protection.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * SES stored templates the function may send with. Messages name their
   * template, so the default allows every template of the account in the
   * stack's region; list the names to narrow it.
   * @default all templates in the account and region (`template/*`)
   */
  readonly sesTemplateNames?: readonly string[];
  /**
   * Powertools service name (POWERTOOLS_SERVICE_NAME); also the `service`
   * dimension of the custom metrics.
   * @default "email-pipeline"
   */
  readonly serviceName?: string;
  /**
   * Who may publish to the topic. The topic policy allows these principals and
   * denies sns:Publish to everyone else, including other principals of the
   * deploying account. Accounts (`AccountPrincipal`, `AccountRootPrincipal`),
   * roles and `ArnPrincipal`s are accepted.
   * @default the deploying account (`new iam.AccountRootPrincipal()`)
   */
  readonly publisherPrincipals?: readonly iam.IPrincipal[];
  /**
   * Who may publish to {@link EmailPipeline.highPriorityTopic}, the high-priority queue's only
   * source; its topic policy denies everyone else. As `publisherPrincipals`; more with
   * {@link EmailPipeline.grantPublishHighPriority}.
   * @default none: nobody publishes high priority until granted
   */
  readonly highPriorityPublisherPrincipals?: readonly iam.IPrincipal[];
  /**
   * Who else, besides the redrive role the construct creates
   * ({@link EmailPipeline.redriveRole}), may redrive: the queue policies deny
   * sqs:SendMessage to everyone but the topic (work queue) and the function
   * (DLQ), except these principals, named by ARN (`aws:PrincipalArn`). Roles
   * (`IRole`, or `ArnPrincipal` with a role ARN: its sessions match too) and
   * users (`ArnPrincipal`). Accounts are refused: an account's ARN would
   * exempt only its root user, and a whole account is not a name. Never a tag:
   * a principal that may tag itself could give itself the exemption.
   * They alone may assume the redrive role too (unless `redriveRoleAssumedBy` says otherwise).
   * @default none: only the redrive role, which then nobody may assume (a synth warning says so)
   */
  readonly redrivePrincipals?: readonly iam.IPrincipal[];
  /**
   * Who may assume the redrive role ({@link EmailPipeline.redriveRole}): its trust policy. Why
   * the default is what it is: lib/construct/pipeline/redrive-role.ts (redriveTrust).
   * @default the `redrivePrincipals` only; with none, nobody (not the whole deploying account)
   */
  readonly redriveRoleAssumedBy?: iam.IPrincipal;
  /**
   * Who may cancel keys not yet sent (`DELETE <CancelUrl><key>`: `email-pipeline cancel`,
   * `EmailPublisher.cancel`): roles (`IRole`, or `ArnPrincipal` with a role ARN) and users
   * (`ArnPrincipal`), the only principals granted the cancel function's own URL (AWS_IAM): IAM
   * decides. More with {@link EmailPipeline.grantCancel}.
   * @default none: nobody can cancel on AWS
   */
  readonly cancelPrincipals?: readonly iam.IPrincipal[];
  /**
   * Encrypt both tables (idempotency records, send ledger) with a customer-managed
   * key (rotation on; {@link EmailPipeline.tableKey}), which only their callers may
   * use, through DynamoDB. Turn off to use the AWS-managed key (`aws/dynamodb`),
   * which every principal of the account allowed to use DynamoDB may use.
   * @default true
   */
  readonly customerManagedTableKey?: boolean;
  /**
   * Encrypt the function's log group with a customer-managed key (rotation on).
   * Turn off to use CloudWatch Logs' default encryption.
   * @default true
   */
  readonly encryptLogs?: boolean;
}
