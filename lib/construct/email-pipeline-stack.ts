/**
 * The deployable stack: one pipeline, its monitoring, and the outputs publishers, operators and
 * the CLI read.
 */
import { CfnOutput, Stack, StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { EmailPipeline, EmailPipelineProps } from './email-pipeline';
import { PIPELINE_ENDPOINTS } from './pipeline/endpoints';
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

    // Each endpoint as a flat output too (the pipeline's own `Endpoints` output holds them all).
    for (const endpoint of PIPELINE_ENDPOINTS) {
      new CfnOutput(this, endpoint.name, { value: endpoint.value(this.pipeline), description: endpoint.description });
    }
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
