/**
 * `npm run publish -- --to a@example.com --subject S --text T [--idempotency-key K]`
 *
 * Publishes one email to the local pipeline (endpoints from .local/outputs.json,
 * written by `npm start`), or to a deployed topic with --topic-arn (region and
 * credentials from the usual AWS settings: AWS_REGION, AWS_PROFILE, ...).
 */
import '../tools/local/quiet';
import { parseArgs } from 'node:util';
import { PublishCommand, SNSClient, type MessageAttributeValue } from '@aws-sdk/client-sns';
import { OUTPUTS_FILE, readLocalOutputs } from '../tools/local/state';
import { emulatorConfig } from '../tools/local/emulators';
import { validateEmail, IDEMPOTENCY_KEY_ATTRIBUTE, InvalidMessageError } from '../lambdas/send-email/message';

const USAGE = `Usage: npm run publish -- --to ADDRESS [--to ADDRESS...] (--subject S --text T [--html H] | --template NAME [--data JSON])
                          [--cc ADDRESS] [--bcc ADDRESS] [--reply-to ADDRESS] [--idempotency-key KEY]
                          [--topic-arn ARN]   publish to a deployed topic instead of the local pipeline`;

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function localTarget(): { topicArn: string; client: SNSClient } {
  const outputs = readLocalOutputs();
  if (!outputs) fail(`No local pipeline found (${OUTPUTS_FILE} is missing). Start it with: npm start`);
  return {
    topicArn: outputs.TopicArn,
    client: new SNSClient(emulatorConfig(outputs.SnsEndpoint)),
  };
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        to: { type: 'string', multiple: true },
        cc: { type: 'string', multiple: true },
        bcc: { type: 'string', multiple: true },
        'reply-to': { type: 'string', multiple: true },
        subject: { type: 'string' },
        text: { type: 'string' },
        html: { type: 'string' },
        template: { type: 'string' },
        data: { type: 'string' },
        'idempotency-key': { type: 'string' },
        'topic-arn': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  let data: unknown;
  if (values.data !== undefined) {
    try {
      data = JSON.parse(values.data);
    } catch {
      fail('--data must be JSON, e.g. --data \'{"name":"Ada"}\'');
    }
  }
  const message = {
    ...(values.to ? { to: values.to } : {}),
    ...(values.cc ? { cc: values.cc } : {}),
    ...(values.bcc ? { bcc: values.bcc } : {}),
    ...(values['reply-to'] ? { replyTo: values['reply-to'] } : {}),
    ...(values.subject !== undefined ? { subject: values.subject } : {}),
    ...(values.text !== undefined ? { text: values.text } : {}),
    ...(values.html !== undefined ? { html: values.html } : {}),
    ...(values.template !== undefined
      ? { template: { name: values.template, ...(data !== undefined ? { data } : {}) } }
      : {}),
  };
  // The same validation the handler applies: a bad message is refused here, before it is published.
  try {
    validateEmail(message);
  } catch (error) {
    if (error instanceof InvalidMessageError) fail(`The message breaks the contract: ${error.message}`);
    throw error;
  }
  const key = values['idempotency-key'];
  const attributes: Record<string, MessageAttributeValue> | undefined =
    key !== undefined ? { [IDEMPOTENCY_KEY_ATTRIBUTE]: { DataType: 'String', StringValue: key } } : undefined;

  const target = values['topic-arn'] ? { topicArn: values['topic-arn'], client: new SNSClient({}) } : localTarget();
  const result = await target.client.send(
    new PublishCommand({
      TopicArn: target.topicArn,
      Message: JSON.stringify(message),
      ...(attributes ? { MessageAttributes: attributes } : {}),
    }),
  );
  console.log(
    `Published ${result.MessageId} to ${target.topicArn}` +
      (key !== undefined ? ` with idempotency key ${key}` : ' (dedupe key: this SNS MessageId)'),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
