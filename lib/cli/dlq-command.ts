/** `email-pipeline dlq list|redrive|purge`: what is in the DLQ and why; send it back; empty it. */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { formatDeadLetter, listDeadLetters, purge, redrive } from '../dlq';
import { parseCommand, wholeNumber } from './args';
import { awsFailure, OperationError, suggestion, UsageError } from './errors';
import { output, resolveTarget, type Target } from './target';
import type { Command, Io } from './command';

export const DLQ_USAGE = `Usage: email-pipeline dlq list    [--max N] [--json] [--stack NAME] [--region R]
       email-pipeline dlq redrive [--max N] [--stack NAME] [--region R]
       email-pipeline dlq purge   --yes-delete-all-messages [--stack NAME] [--region R]

Without --stack it works on the local pipeline (npm start).`;

const SUBCOMMANDS = ['list', 'redrive', 'purge'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

function isSubcommand(word: string): word is Subcommand {
  return (SUBCOMMANDS as readonly string[]).includes(word);
}

const OPTIONS = {
  max: { type: 'string' },
  json: { type: 'boolean' },
  stack: { type: 'string' },
  region: { type: 'string' },
  'yes-delete-all-messages': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function sqsClient(target: Target): SQSClient {
  // Local queue URLs name a host that does not resolve: always use the configured endpoint.
  return new SQSClient({ ...target.clients.sqs, useQueueUrlAsEndpoint: false });
}

async function arnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new OperationError(`Could not read the ARN of ${queueUrl}.`);
  return arn;
}

export const dlqCommand: Command = {
  name: 'dlq',
  summary: 'list, redrive or purge the dead-letter queue',
  usage: DLQ_USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const parsed = parseCommand(argv, OPTIONS, DLQ_USAGE, io);
    if (!parsed) return;
    const { values, positionals } = parsed;
    const [sub, ...extra] = positionals;
    if (sub === undefined) throw new UsageError('say what to do: list, redrive or purge', DLQ_USAGE);
    if (!isSubcommand(sub)) {
      throw new UsageError(`unknown dlq command "${sub}"${suggestion(sub, SUBCOMMANDS)}`, DLQ_USAGE);
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0] ?? ''}"`, DLQ_USAGE);
    const max = wholeNumber('max', values.max, 1, DLQ_USAGE);
    if (sub === 'purge' && !values['yes-delete-all-messages']) {
      throw new UsageError(
        'purge deletes every message in the DLQ for good: add --yes-delete-all-messages to confirm',
        DLQ_USAGE,
      );
    }
    if (values.json && sub !== 'list') throw new UsageError('--json goes with dlq list', DLQ_USAGE);

    const target = await resolveTarget({ stack: values.stack, region: values.region });
    const dlqUrl = output(target, 'DeadLetterQueueUrl');
    const sqs = sqsClient(target);
    try {
      await operate(sub, target, sqs, dlqUrl, { max, json: values.json === true }, io);
    } catch (error) {
      throw awsFailure(`Could not ${sub} the DLQ of ${target.description}`, error, !target.local);
    } finally {
      sqs.destroy();
    }
  },
};

/** One dlq subcommand against the target's DLQ. */
async function operate(
  sub: Subcommand,
  target: Target,
  sqs: SQSClient,
  dlqUrl: string,
  options: { readonly max: number | undefined; readonly json: boolean },
  io: Io,
): Promise<void> {
  const { max } = options;
  if (sub === 'list') {
    const letters = await listDeadLetters(sqs, dlqUrl, max ?? 100);
    if (options.json) {
      for (const letter of letters) io.out(JSON.stringify(letter));
    } else if (letters.length === 0) {
      io.out(`The DLQ of ${target.description} is empty.`);
    } else {
      for (const letter of letters) io.out(formatDeadLetter(letter));
      io.err(`${letters.length} message(s) in the DLQ of ${target.description}.`);
    }
    return;
  }
  if (sub === 'redrive') {
    const queueUrl = output(target, 'QueueUrl');
    const result = await redrive(sqs, {
      dlqUrl,
      dlqArn: await arnOf(sqs, dlqUrl),
      sourceQueueUrl: queueUrl,
      sourceQueueArn: await arnOf(sqs, queueUrl),
      ...(max !== undefined ? { max } : {}),
      copyOnly: target.local,
    });
    io.out(
      result.mode === 'native'
        ? `Started the SQS message move task ${result.taskHandle ?? ''} on ${target.description}: every DLQ message goes back to the queue.`
        : `Moved ${result.moved} message(s) from the DLQ back to the queue of ${target.description}. ` +
            'Copies of emails already sent are suppressed by the pipeline.',
    );
    return;
  }
  await purge(sqs, dlqUrl);
  io.out(`Purged the DLQ of ${target.description}.`);
}
