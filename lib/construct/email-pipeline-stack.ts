/**
 * The deployable stack: one pipeline, its monitoring, and the outputs publishers, operators and
 * the CLI read.
 */
import { CfnOutput, Stack, StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EmailPipeline, EmailPipelineProps } from './email-pipeline';
import { EmailPipelineMonitoring, EmailPipelineMonitoringProps } from './monitoring/monitoring';

export interface EmailPipelineStackProps extends StackProps {
  /** Settings of the pipeline (see {@link EmailPipelineProps}). */
  readonly pipeline: EmailPipelineProps;
  /**
   * Dashboard and alarms (see {@link EmailPipelineMonitoringProps}), or
   * `false` for none.
   * @default a dashboard and every alarm, notifying a new alarm topic
   */
  readonly monitoring?: Omit<EmailPipelineMonitoringProps, 'pipeline'> | false;
}

/**
 * The deployable unit: one {@link EmailPipeline} and the outputs publishers
 * and operators need. Environment-agnostic unless `env` is given.
 */
export class EmailPipelineStack extends Stack {
  public readonly pipeline: EmailPipeline;
  public readonly monitoring?: EmailPipelineMonitoring;

  constructor(scope: Construct, id: string, props: EmailPipelineStackProps) {
    super(scope, id, props);
    this.pipeline = new EmailPipeline(this, 'Pipeline', props.pipeline);
    if (props.monitoring !== false) {
      this.monitoring = new EmailPipelineMonitoring(this, 'Monitoring', {
        ...props.monitoring,
        pipeline: this.pipeline,
      });
    }

    new CfnOutput(this, 'TopicArn', {
      value: this.pipeline.topic.topicArn,
      description: 'Publish email requests here',
    });
    new CfnOutput(this, 'CancelUrl', {
      value: `${this.pipeline.ledger.cancelUrl.url}deliveries/`,
      description:
        'DELETE <CancelUrl><key> (SigV4, lambda:InvokeFunctionUrl, granted to the cancel principals only): cancels a key not yet sent',
    });
    new CfnOutput(this, 'QueueUrl', {
      value: this.pipeline.queue.queueUrl,
      description: 'Work queue between the topic and the function',
    });
    new CfnOutput(this, 'DeadLetterQueueUrl', {
      value: this.pipeline.deadLetterQueue.queueUrl,
      description: 'Permanent failures and messages past maxReceiveCount',
    });
    new CfnOutput(this, 'TableName', {
      value: this.pipeline.table.tableName,
      description: 'Idempotency records',
    });
    new CfnOutput(this, 'FunctionName', {
      value: this.pipeline.sendFunction.functionName,
      description: 'The send-email function',
    });
    new CfnOutput(this, 'RedriveRoleArn', {
      value: this.pipeline.redriveRole.roleArn,
      description:
        'Assume this role to list, redrive or purge the DLQ (email-pipeline dlq ... --stack); the queue policies exempt it by ARN',
    });
    // --- send ledger: what publishers and `npm run status -- --stack` read ----
    const { ledger } = this.pipeline;
    new CfnOutput(this, 'StatusUrl', {
      value: `${ledger.statusUrl.url}deliveries/`,
      description: 'GET <StatusUrl><key> (SigV4, lambda:InvokeFunctionUrl): the delivery status of a dedupe key',
    });
    new CfnOutput(this, 'DeliveryStatusTopicArn', {
      value: ledger.deliveryStatusTopic.topicArn,
      description: 'Every status change of a key; filter on the status and idempotency-key attributes',
    });
    new CfnOutput(this, 'LedgerTableName', {
      value: ledger.table.tableName,
      description: 'Send ledger: SES MessageId, status and events per dedupe key',
    });
    // --- operator CLI: the other DLQs and their sources (email-pipeline dlq --queue ...) ----
    new CfnOutput(this, 'SubscriptionDeadLetterQueueUrl', {
      value: this.pipeline.subscriptionDeadLetterQueue.queueUrl,
      description: 'Deliveries SNS could not make to the work queue (email-pipeline dlq --queue subscription)',
    });
    new CfnOutput(this, 'LedgerBufferQueueUrl', {
      value: ledger.bufferQueue.queueUrl,
      description: 'SES events on their way to the ledger function',
    });
    new CfnOutput(this, 'LedgerDeadLetterQueueUrl', {
      value: ledger.bufferDeadLetterQueue.queueUrl,
      description: 'SES events the ledger function could not record (email-pipeline dlq --queue ledger)',
    });
    new CfnOutput(this, 'LedgerDeadLetterMappingId', {
      value: ledger.deadLetterMapping.id,
      description:
        "UUID of the ledger function's mapping of the ledger DLQ, disabled: email-pipeline dlq redrive --queue ledger enables it until the DLQ is drained",
    });
    new CfnOutput(this, 'AttachmentsBucketName', {
      value: this.pipeline.attachmentsBucket.bucketName,
      description: 'Attachments sent by s3Key (contract v1.2); grantAttachmentUpload lets a principal put objects',
    });
    new CfnOutput(this, 'IdempotencyKeyPrefix', {
      value: this.pipeline.settings.idempotencyKeyPrefix,
      description: 'Prefix of the idempotency records (the status lookup reads them)',
    });
    // --- where the functions log: the saved Logs Insights queries read these ----
    new CfnOutput(this, 'SendLogGroupName', {
      value: this.pipeline.logGroupNames.send,
      description: 'Log group of the send function (one line per decision, keyed by dedupeKey)',
    });
    new CfnOutput(this, 'LedgerLogGroupName', {
      value: this.pipeline.logGroupNames.ledger,
      description: 'Log group of the ledger function (one line per SES event recorded)',
    });
    new CfnOutput(this, 'StatusLogGroupName', {
      value: this.pipeline.logGroupNames.status,
      description: 'Log group of the status function',
    });
    if (this.monitoring !== undefined) {
      new CfnOutput(this, 'AlarmTopicArn', {
        value: this.monitoring.alarmTopic.topicArn,
        description: 'Paging alarms and their OK notifications (a person must act now); subscribe the on-call here',
      });
      new CfnOutput(this, 'WarningTopicArn', {
        value: this.monitoring.warningTopic.topicArn,
        description: 'Warnings and their OK notifications (look during working hours); subscribe the team here',
      });
    }
  }
}
