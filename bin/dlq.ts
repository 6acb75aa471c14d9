/**
 * `npm run dlq -- <list|redrive|purge> [options]`: operator tools for the DLQ.
 *
 * Target: the local pipeline (default; endpoints from .local/outputs.json) or a
 * deployed stack with --stack NAME (queue URLs from its outputs; region and
 * credentials from the usual AWS settings).
 */
import '../lib/local/quiet';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { formatDeadLetter, listDeadLetters, purge, redrive } from '../lib/dlq';
import { OUTPUTS_FILE, readLocalOutputs } from '../lib/local/state';
import { emulatorConfig } from '../lib/local/emulators';

const USAGE = `Usage: npm run dlq -- list    [--max N] [--stack NAME]
       npm run dlq -- redrive [--max N] [--stack NAME]
       npm run dlq -- purge --yes-delete-all-messages [--stack NAME]

Without --stack the local pipeline (npm start) is used.`;

interface Target {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly local: boolean;
}

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

async function resolveTarget(stack: string | undefined): Promise<Target> {
  if (!stack) {
    const outputs = readLocalOutputs();
    if (!outputs)
      fail(`No local pipeline found (${OUTPUTS_FILE} is missing). Start it with npm start, or pass --stack.`);
    return {
      sqs: new SQSClient({ ...emulatorConfig(outputs.SqsEndpoint), useQueueUrlAsEndpoint: false }),
      queueUrl: outputs.QueueUrl,
      dlqUrl: outputs.DeadLetterQueueUrl,
      local: true,
    };
  }
  const { Stacks = [] } = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stack }));
  const outputs = Object.fromEntries((Stacks[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
  if (!outputs.QueueUrl || !outputs.DeadLetterQueueUrl)
    fail(`Stack ${stack} has no QueueUrl/DeadLetterQueueUrl outputs.`);
  return { sqs: new SQSClient({}), queueUrl: outputs.QueueUrl, dlqUrl: outputs.DeadLetterQueueUrl, local: false };
}

async function arnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  return Attributes?.QueueArn ?? fail(`Could not read the ARN of ${queueUrl}`);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      max: { type: 'string' },
      stack: { type: 'string' },
      'yes-delete-all-messages': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  let max: number | undefined;
  if (values.max !== undefined) {
    max = Number(values.max);
    if (!Number.isInteger(max) || max < 1) fail(`--max must be a whole number of at least 1, got ${values.max}`);
  }
  const target = await resolveTarget(values.stack);
  switch (command) {
    case 'list': {
      const letters = await listDeadLetters(target.sqs, target.dlqUrl, max ?? 100);
      if (letters.length === 0) console.log('The DLQ is empty.');
      for (const letter of letters) console.log(formatDeadLetter(letter));
      return;
    }
    case 'redrive': {
      const result = await redrive(target.sqs, {
        dlqUrl: target.dlqUrl,
        dlqArn: await arnOf(target.sqs, target.dlqUrl),
        sourceQueueUrl: target.queueUrl,
        sourceQueueArn: await arnOf(target.sqs, target.queueUrl),
        ...(max !== undefined ? { max } : {}),
        copyOnly: target.local,
      });
      console.log(
        result.mode === 'native'
          ? `Started the SQS message move task ${result.taskHandle ?? ''}: every DLQ message goes back to the queue.`
          : `Moved ${result.moved} message(s) back to the queue. Duplicates among them are suppressed by the pipeline.`,
      );
      return;
    }
    case 'purge': {
      if (!values['yes-delete-all-messages']) {
        fail('purge deletes every message in the DLQ for good. Add --yes-delete-all-messages to confirm.');
      }
      await purge(target.sqs, target.dlqUrl);
      console.log('Purged the DLQ.');
      return;
    }
    default:
      fail(`Unknown command "${command}".`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
