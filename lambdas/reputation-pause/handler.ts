/**
 * The reputation pause: the function the review-level reputation alarms invoke (a CloudWatch
 * Lambda alarm action, lib/construct/monitoring/reputation-pause.ts) when `pauseSendingOnReputation`
 * is on. On the alarm's transition to ALARM it turns sending off for the pipeline's configuration
 * set (SES v2 PutConfigurationSetSendingOptions, SendingEnabled false) and logs that it did; on
 * anything else it does nothing. It can only pause: resuming is a person's decision. The action
 * invokes it asynchronously, so a failed call is retried by Lambda (twice).
 */
import { PutConfigurationSetSendingOptionsCommand, SESv2Client } from '@aws-sdk/client-sesv2';

/** What a CloudWatch alarm action passes the function: the fields read here. */
export interface AlarmActionEvent {
  readonly alarmData?: {
    readonly alarmName?: string;
    readonly state?: { readonly value?: string; readonly reason?: string };
  };
}

const ses = new SESv2Client({});

export async function handler(event: AlarmActionEvent | undefined): Promise<void> {
  const alarm = event?.alarmData;
  if (alarm?.state?.value !== 'ALARM') return;
  const configurationSet = process.env.CONFIGURATION_SET_NAME;
  if (!configurationSet) throw new Error('CONFIGURATION_SET_NAME is not set: nothing to pause');
  await ses.send(
    new PutConfigurationSetSendingOptionsCommand({ ConfigurationSetName: configurationSet, SendingEnabled: false }),
  );
  console.log(
    JSON.stringify({
      level: 'WARN',
      message: 'sending paused for the configuration set',
      configurationSet,
      alarm: alarm.alarmName,
      reason: alarm.state.reason,
    }),
  );
}
