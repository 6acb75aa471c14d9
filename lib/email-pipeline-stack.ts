import { CfnOutput, Stack, StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EmailPipeline, EmailPipelineProps } from './email-pipeline';
import { EmailPipelineMonitoring, EmailPipelineMonitoringProps } from './monitoring';

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
    if (this.monitoring !== undefined) {
      new CfnOutput(this, 'AlarmTopicArn', {
        value: this.monitoring.alarmTopic.topicArn,
        description: 'Alarm and OK notifications; subscribe the on-call here',
      });
    }
  }
}
