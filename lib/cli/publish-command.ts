/** `email-pipeline publish`: one email to the pipeline's topic, checked first as the pipeline will check it. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { IDEMPOTENCY_KEY_ATTRIBUTE, readSendAt } from '../../lambdas/kernel/contract';
import {
  checkEmail,
  EmailPublisher,
  InvalidMessageError,
  PRIORITIES,
  type FileAttachment,
  type Priority,
  type PublishableEmail,
} from '../publisher';
import { placeAttachments } from '../publisher-attachments';
import { parseCommand, type Parsed } from './args';
import { awsFailure, OperationError, UsageError } from './errors';
import { printable } from './printable';
import { TEAM_OPTION, teamOption, teamTopicsOf } from './team-option';
import { output, resolveTarget, TARGET_HELP, TARGET_OPTIONS, targetOptions, type ClientSettings } from './target';
import type { Command, Io } from './command';

export const PUBLISH_USAGE = `Usage: email-pipeline publish --to ADDRESS [--cc ADDRESS] [--bcc ADDRESS] [--reply-to ADDRESS]
         (--subject S --text T [--html H] | --subject S --html H | --template NAME [--data JSON])
         [--tags NAME=VALUE[,NAME=VALUE...]] [--header NAME=VALUE] [--attach FILE]
         [--idempotency-key KEY] [--priority high|normal] [--send-at T] [--team NAME] [--json]
         [--stack NAME [--pipeline NAME] | --topic-arn ARN] [--region R]

The address options, --header and --attach may be repeated. --attach sends a file: inline when the
message holds it, else uploaded to the pipeline's attachments bucket (AttachmentsBucketName). The message is checked as the pipeline checks it, before it is
published; with --idempotency-key, publishing it again sends no second email (the key is the dedupe key).
--priority high sends it through the high-priority lane (its own queue and reserved rate; default normal).
--send-at T (RFC 3339 with an offset, e.g. 2026-12-24T08:00:00Z) sends it not before T, at most the
pipeline's maxScheduleAheadSeconds (24 h by default; a deployed pipeline's own, when its outputs
name it) ahead; email-pipeline cancel KEY stops it. --json prints what was published as one JSON
object. --topic-arn publishes to that topic, with the region of the ARN unless --region is given.
--team NAME publishes through that team's topic (its high-priority topic with --priority high, for a
team allowed one): the pipeline knows the team from the topic, and the key is the team's own.

${TARGET_HELP}`;

const OPTIONS = {
  to: { type: 'string', multiple: true },
  cc: { type: 'string', multiple: true },
  bcc: { type: 'string', multiple: true },
  'reply-to': { type: 'string', multiple: true },
  subject: { type: 'string' },
  text: { type: 'string' },
  html: { type: 'string' },
  template: { type: 'string' },
  data: { type: 'string' },
  tags: { type: 'string', multiple: true },
  header: { type: 'string', multiple: true },
  attach: { type: 'string', multiple: true },
  'idempotency-key': { type: 'string' },
  priority: { type: 'string' },
  'send-at': { type: 'string' },
  ...TEAM_OPTION,
  json: { type: 'boolean' },
  ...TARGET_OPTIONS,
  'topic-arn': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = Parsed<typeof OPTIONS>['values'];

const TOPIC_ARN = /^arn:aws[a-z-]*:sns:([a-z0-9-]+):\d{12}:[A-Za-z0-9_-]+$/;

function usage(message: string): never {
  throw new UsageError(message, PUBLISH_USAGE);
}

function readData(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    data = undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    usage(`--data must be a JSON object, e.g. --data '{"name":"Ada"}', got ${JSON.stringify(raw)}`);
  }
  return data as Record<string, unknown>;
}

/** `--tags a=b,c=d --tags e=f` as one object. */
function readTags(raw: readonly string[] | undefined): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  const pairs = raw.flatMap((item) => item.split(','));
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) usage(`--tags takes NAME=VALUE pairs (repeated or comma-separated), got ${JSON.stringify(pair)}`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** `--header A=b --header C=d` as one object (the value may hold `=`). */
function readHeaders(raw: readonly string[] | undefined): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  return Object.fromEntries(
    raw.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) usage(`--header takes NAME=VALUE, got ${JSON.stringify(pair)}`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** Content types by file extension; anything else is application/octet-stream. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  json: 'application/json',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  zip: 'application/zip',
  ics: 'text/calendar',
};

/** Each `--attach FILE` as a file by its bytes, named by its base name. */
function readAttachments(files: readonly string[] | undefined): FileAttachment[] | undefined {
  if (files === undefined) return undefined;
  return files.map((file) => {
    let content: Buffer;
    try {
      content = readFileSync(file);
    } catch (error) {
      usage(`--attach ${JSON.stringify(file)}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    const filename = path.basename(file);
    const extension = path.extname(filename).slice(1).toLowerCase();
    return { filename, contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream', content };
  });
}

/** What the command line says, as the message of the contract; what is missing is named as a flag. */
function messageOf(values: Values): PublishableEmail {
  const { to, subject, text, html, template } = values;
  if (to === undefined) usage('--to is required');
  if (values.data !== undefined && template === undefined) usage('--data goes with --template');
  if (template !== undefined && (subject ?? text ?? html) !== undefined) {
    usage('--template cannot be combined with --subject, --text or --html: the template defines them');
  }
  if (template === undefined && text === undefined && html === undefined) {
    usage('say what to send: --subject with --text and/or --html, or --template');
  }
  if (template === undefined && subject === undefined) usage('--subject is required with --text or --html');
  const data = readData(values.data);
  const tags = readTags(values.tags);
  const headers = readHeaders(values.header);
  const attachments = readAttachments(values.attach);
  const common = {
    to,
    ...(headers ? { headers } : {}),
    ...(attachments ? { attachments } : {}),
    ...(values.cc ? { cc: values.cc } : {}),
    ...(values.bcc ? { bcc: values.bcc } : {}),
    ...(values['reply-to'] ? { replyTo: values['reply-to'] } : {}),
    ...(tags ? { tags } : {}),
  };
  if (template !== undefined) return { ...common, template: { name: template, ...(data ? { data } : {}) } };
  const body = text !== undefined ? { text, ...(html !== undefined ? { html } : {}) } : { html: html ?? '' };
  return { ...common, subject: subject ?? '', ...body };
}

const FLAGS: Readonly<Record<string, string>> = {
  to: '--to',
  cc: '--cc',
  bcc: '--bcc',
  replyTo: '--reply-to',
  subject: '--subject',
  text: '--text',
  html: '--html',
  template: '--template',
  'template.name': '--template',
  'template.data': '--data',
  tags: '--tags',
  [`attribute ${IDEMPOTENCY_KEY_ATTRIBUTE}`]: '--idempotency-key',
  sendAt: '--send-at',
};

/** A contract field as the option that set it: `to[1]` -> `--to "bob@"`, `tags.x` -> `--tags x`. */
function flagOf(field: string, values: Values): string {
  const item = /^(to|cc|bcc|replyTo)\[(\d+)\]$/.exec(field);
  if (item) {
    const [, name = '', index = '0'] = item;
    const given = values[name === 'replyTo' ? 'reply-to' : (name as 'to' | 'cc' | 'bcc')]?.[Number(index)];
    return `${FLAGS[name] ?? name} ${JSON.stringify(given)}`;
  }
  if (field.startsWith('tags.')) return `--tags ${field.slice('tags.'.length)}`;
  if (field.startsWith('headers.')) return `--header ${field.slice('headers.'.length)}`;
  const attached = /^attachments\[(\d+)\]/.exec(field);
  if (attached) return `--attach ${JSON.stringify(values.attach?.[Number(attached[1])])}`;
  if (field === 'attachments' || field === 'headers') return field === 'headers' ? '--header' : '--attach';
  return FLAGS[field] ?? field;
}

/** Where a command line publishes: a topic by its ARN, or a pipeline (target.ts). */
type Where =
  { readonly topicArn: string; readonly region: string } | { readonly target: ReturnType<typeof targetOptions> };

/** Where the command line says to publish; throws UsageError (before any AWS call). */
function whereTo(values: Values): Where {
  const topicArn = values['topic-arn'];
  if (topicArn === undefined) return { target: targetOptions(values, PUBLISH_USAGE) };
  if (values.stack !== undefined || values.pipeline !== undefined) {
    usage(`give --${values.stack !== undefined ? 'stack' : 'pipeline'} or --topic-arn, not both`);
  }
  const region = TOPIC_ARN.exec(topicArn)?.[1];
  if (region === undefined) {
    usage(`--topic-arn must be an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME), got ${JSON.stringify(topicArn)}`);
  }
  return { topicArn, region: values.region ?? region };
}

/** A deployed pipeline's maxScheduleAheadSeconds, when its outputs name it. */
function scheduleAhead(outputs: Readonly<Record<string, string>>): number | undefined {
  const raw = outputs.MaxScheduleAheadSeconds;
  const seconds = raw === undefined ? NaN : Number(raw);
  return Number.isSafeInteger(seconds) && seconds >= 0 ? seconds : undefined;
}

/** The client settings and topic to publish to, and how to name them. */
async function destination(
  where: Where,
  priority: string | undefined,
  team: string | undefined,
): Promise<{
  topicArn: string;
  highPriorityTopicArn?: string;
  sns: ClientSettings;
  description: string;
  local: boolean;
  maxScheduleAheadSeconds?: number;
  attachments?: { bucket: string; s3: ClientSettings & { forcePathStyle?: boolean } };
}> {
  if ('topicArn' in where) {
    return { topicArn: where.topicArn, sns: { region: where.region }, description: where.topicArn, local: false };
  }
  const target = await resolveTarget(where.target);
  const ahead = scheduleAhead(target.outputs);
  const bucket = target.outputs.AttachmentsBucketName;
  // Locally, S3 is fauxqs's (S3Endpoint), path-style; deployed, the stack's region.
  const s3 = target.local
    ? {
        ...target.clients.sns,
        endpoint: target.outputs.S3Endpoint ?? target.clients.sns.endpoint,
        forcePathStyle: true,
      }
    : target.clients.sns;
  // A team publishes through its own topics; the pipeline's high lane has a topic of its own too.
  const own = team !== undefined ? teamTopicsOf(target.outputs, team, target.description) : undefined;
  if (own && priority === 'high' && own.HighPriorityTopicArn === undefined) {
    throw new OperationError(`Team ${team} of ${target.description} has no high-priority topic (highPriority is off)`);
  }
  const high = priority === 'high' ? (own ? own.HighPriorityTopicArn : target.outputs.HighPriorityTopicArn) : undefined;
  return {
    topicArn: own ? own.TopicArn : output(target, 'TopicArn'),
    ...(high ? { highPriorityTopicArn: high } : {}),
    sns: target.clients.sns,
    description: target.description,
    local: target.local,
    ...(ahead !== undefined ? { maxScheduleAheadSeconds: ahead } : {}),
    ...(bucket ? { attachments: { bucket, s3 } } : {}),
  };
}

export const publishCommand: Command = {
  name: 'publish',
  summary: 'publish one email, checked first as the pipeline will check it',
  usage: PUBLISH_USAGE,
  async run(argv: readonly string[], io: Io): Promise<void> {
    const parsed = parseCommand(argv, OPTIONS, PUBLISH_USAGE, io);
    if (!parsed) return;
    const { values, positionals } = parsed;
    if (positionals.length > 0) usage(`unexpected argument "${positionals[0] ?? ''}"`);
    const where = whereTo(values);
    const message = messageOf(values);
    const key = values['idempotency-key'];
    const priority = values.priority;
    if (priority !== undefined && !(PRIORITIES as readonly string[]).includes(priority)) {
      usage(`--priority must be one of ${PRIORITIES.join(', ')}, got ${JSON.stringify(priority)}`);
    }
    const sendAt = values['send-at'];
    const options = {
      ...(sendAt !== undefined ? { sendAt } : {}),
      ...(key !== undefined ? { idempotencyKey: key } : {}),
      ...(priority !== undefined ? { priority: priority as Priority } : {}),
    };
    // A deployed pipeline's own maxScheduleAheadSeconds is known once its outputs are read: until
    // then only the form of --send-at is checked (the local pipeline and a bare topic: the default).
    const stackLimit = 'target' in where && where.target.stack !== undefined && sendAt !== undefined;
    const sendAtForm = sendAt === undefined ? undefined : readSendAt(sendAt);
    try {
      // Files as they will travel (large ones by s3Key; whether a bucket exists is known at the destination).
      const checked = stackLimit ? { ...options, sendAt: undefined } : options;
      checkEmail(placeAttachments(message, key, { bucket: 'check' }).message, checked);
      if (stackLimit && sendAtForm?.ok === false) {
        throw new InvalidMessageError('InvalidMessage', [{ field: 'sendAt', reason: sendAtForm.reason }]);
      }
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      usage(
        `the message breaks the contract: ${error.issues.map((i) => `${flagOf(i.field, values)}: ${i.reason}`).join('; ')}`,
      );
    }

    const team = teamOption(values.team, PUBLISH_USAGE);
    if (team !== undefined && 'topicArn' in where) usage('give --team or --topic-arn, not both');
    const to = await destination(where, priority, team);
    const publisher = new EmailPublisher({
      topicArn: to.topicArn,
      ...(team !== undefined ? { team } : {}),
      ...(to.highPriorityTopicArn ? { highPriorityTopicArn: to.highPriorityTopicArn } : {}),
      sns: to.sns,
      ...(to.maxScheduleAheadSeconds !== undefined ? { maxScheduleAheadSeconds: to.maxScheduleAheadSeconds } : {}),
      ...(to.attachments ? { attachments: to.attachments } : {}),
    });
    try {
      const published = await publisher.publish(message, options).catch((error: unknown) => {
        if (error instanceof InvalidMessageError) {
          // What only the destination decides (its schedule limit, its attachments bucket): not a usage error.
          throw new OperationError(
            `Not published to ${to.description}: ${error.issues.map((i) => `${flagOf(i.field, values)}: ${i.reason}`).join('; ')}`,
          );
        }
        throw awsFailure(`Could not publish to ${to.description}`, error, !to.local);
      });
      if (values.json) {
        io.out(
          JSON.stringify({
            messageId: published.messageId,
            dedupeKey: published.dedupeKey,
            to: to.description,
            ...(sendAt !== undefined ? { sendAt } : {}),
            ...(priority !== undefined ? { priority } : {}),
            ...(team !== undefined ? { team } : {}),
          }),
        );
        return;
      }
      io.out(
        `Published ${printable(published.messageId)} to ${to.description}` +
          (team !== undefined ? ` for team ${team}` : '') +
          (key !== undefined
            ? ` with idempotency key ${printable(published.dedupeKey)}`
            : ' (dedupe key: this SNS MessageId)') +
          (sendAt !== undefined ? `, to be sent at ${printable(sendAt)}` : ''),
      );
    } finally {
      publisher.destroy();
    }
  },
};
