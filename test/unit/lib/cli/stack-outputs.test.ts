/**
 * The CLI against a deployed stack, end to end in one process: CloudFormation and SNS are a local
 * stand-in answering DescribeStacks and Publish in their own wire format (the SDK clients reach it
 * through AWS_ENDPOINT_URL_CLOUDFORMATION and AWS_ENDPOINT_URL_SNS), for a stack holding two
 * pipelines. Which pipeline is addressed (--pipeline, EMAIL_PIPELINE_*), what --json prints, and
 * --send-at checked against the addressed pipeline's own maxScheduleAheadSeconds.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cli } from '../../helpers';

const STACK = 'MailStack';
const topic = (name: string) => `arn:aws:sns:eu-west-1:111122223333:${name}`;
const OUTPUTS: Record<string, Record<string, unknown>> = {
  MailBillingEmailPipelineA1B2C3D4: {
    emailPipeline: 'Mail/Billing',
    v: 1,
    TopicArn: topic('billing'),
    QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/billing',
    DeadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/billing-dlq',
    MaxScheduleAheadSeconds: 3 * 86_400,
    HighPriorityTopicArn: topic('billing-high'),
    Teams: {
      invoices: { TopicArn: topic('billing-team-invoices') },
      fraud: { TopicArn: topic('billing-team-fraud'), HighPriorityTopicArn: topic('billing-team-fraud-high') },
    },
  },
  MailMarketingEmailPipelineE5F6A7B8: {
    emailPipeline: 'Mail/Marketing',
    v: 1,
    TopicArn: topic('marketing'),
    QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/marketing',
    DeadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/marketing-dlq',
  },
};

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function describeStacks(name: string): { status: number; body: string } {
  if (name !== STACK) {
    return {
      status: 400,
      body: `<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${xml(name)} does not exist</Message></Error><RequestId>r</RequestId></ErrorResponse>`,
    };
  }
  const members = Object.entries(OUTPUTS)
    .map(
      ([key, value]) =>
        `<member><OutputKey>${key}</OutputKey><OutputValue>${xml(JSON.stringify(value))}</OutputValue></member>`,
    )
    .join('');
  return {
    status: 200,
    body:
      '<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>' +
      `<StackName>${STACK}</StackName><StackId>arn:aws:cloudformation:eu-west-1:111122223333:stack/${STACK}/1</StackId>` +
      '<CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus>' +
      `<Outputs>${members}</Outputs></member></Stacks></DescribeStacksResult>` +
      '<ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStacksResponse>',
  };
}

let server: Server;
const published: URLSearchParams[] = [];
const described: string[] = [];
const saved = { ...process.env };

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const form = new URLSearchParams(body);
      let answer: { status: number; body: string };
      if (form.get('Action') === 'DescribeStacks') {
        described.push(form.get('StackName') ?? '');
        answer = describeStacks(form.get('StackName') ?? '');
      } else {
        published.push(form);
        answer = {
          status: 200,
          body: `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>m-${published.length}</MessageId></PublishResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></PublishResponse>`,
        };
      }
      response.writeHead(answer.status, { 'content-type': 'text/xml' }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (const name of ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'EMAIL_PIPELINE_STACK', 'EMAIL_PIPELINE_NAME']) {
    delete process.env[name];
  }
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_CLOUDFORMATION: endpoint,
    AWS_ENDPOINT_URL_SNS: endpoint,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
  });
});
afterAll(async () => {
  process.env = { ...saved };
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  published.length = 0;
  described.length = 0;
  delete process.env.EMAIL_PIPELINE_STACK;
  delete process.env.EMAIL_PIPELINE_NAME;
});

const EMAIL = ['--to', 'ada@example.com', '--subject', 'Invoice', '--text', 'Attached.'];

test('publish --stack --pipeline reaches that pipeline; --json prints one object', async () => {
  const ran = await cli(
    'publish',
    ...EMAIL,
    '--idempotency-key',
    'inv-1',
    '--stack',
    STACK,
    '--pipeline',
    'Billing',
    '--json',
  );
  expect(ran).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(ran.stdout)).toEqual({
    messageId: 'm-1',
    dedupeKey: 'inv-1',
    to: 'pipeline Mail/Billing of stack MailStack',
  });
  expect(described).toEqual([STACK]);
  expect(published.map((p) => p.get('TopicArn'))).toEqual([topic('billing')]);
});

test('--priority high goes to the high lane: its own topic when the pipeline names one, else the attribute', async () => {
  expect((await cli('publish', ...EMAIL, '--priority', 'high', '--stack', STACK, '--pipeline', 'Billing')).code).toBe(
    0,
  );
  expect((await cli('publish', ...EMAIL, '--priority', 'high', '--stack', STACK, '--pipeline', 'Marketing')).code).toBe(
    0,
  );
  expect(published.map((p) => p.get('TopicArn'))).toEqual([topic('billing-high'), topic('marketing')]);
  for (const form of published) {
    expect(form.get('MessageAttributes.entry.1.Name')).toBe('priority');
    expect(form.get('MessageAttributes.entry.1.Value.StringValue')).toBe('high');
  }
});

test('EMAIL_PIPELINE_STACK and EMAIL_PIPELINE_NAME name the target; the flags win', async () => {
  process.env.EMAIL_PIPELINE_STACK = STACK;
  process.env.EMAIL_PIPELINE_NAME = 'Mail/Marketing';
  expect((await cli('publish', ...EMAIL)).code).toBe(0);
  expect((await cli('publish', ...EMAIL, '--pipeline', 'Billing')).code).toBe(0);
  expect(published.map((p) => p.get('TopicArn'))).toEqual([topic('marketing'), topic('billing')]);
});

test('two pipelines and none named: exit 1, listing them, nothing published', async () => {
  const ran = await cli('publish', ...EMAIL, '--stack', STACK);
  expect(ran.code).toBe(1);
  expect(ran.stderr).toContain(
    'Stack MailStack holds 2 email pipelines: Mail/Billing, Mail/Marketing. Say which with --pipeline NAME (or EMAIL_PIPELINE_NAME)',
  );
  expect(published).toEqual([]);
});

test('a stack that does not exist: what CloudFormation said, and what to check', async () => {
  const ran = await cli('status', 'order-42', '--stack', 'NoSuchStack');
  expect(ran.code).toBe(1);
  expect(ran.stderr).toContain(
    'Could not read the outputs of stack NoSuchStack: ValidationError: Stack with id NoSuchStack does not exist',
  );
});

test("--send-at is checked against the addressed pipeline's own maxScheduleAheadSeconds", async () => {
  const inTwoDays = new Date(Date.now() + 2 * 86_400_000).toISOString();
  // Billing allows 3 days ahead: published, though the default (24 h) would refuse it.
  const billing = await cli('publish', ...EMAIL, '--send-at', inTwoDays, '--stack', STACK, '--pipeline', 'Billing');
  expect(billing.code).toBe(0);
  expect(billing.stdout).toContain(
    `to pipeline Mail/Billing of stack MailStack (dedupe key: this SNS MessageId), to be sent at ${inTwoDays}`,
  );
  // Marketing names no limit: the default, said as what the pipeline refused (exit 1), nothing published.
  const marketing = await cli('publish', ...EMAIL, '--send-at', inTwoDays, '--stack', STACK, '--pipeline', 'Marketing');
  expect(marketing.code).toBe(1);
  expect(marketing.stderr).toContain(
    'Not published to pipeline Mail/Marketing of stack MailStack: --send-at: must be at most 86400 s after the message was published',
  );
  expect(published).toHaveLength(1);
  // The form of --send-at is still a usage error before the stack is read.
  const form = await cli('publish', ...EMAIL, '--send-at', 'tomorrow', '--stack', STACK, '--pipeline', 'Billing');
  expect(form.code).toBe(2);
  expect(form.stderr).toContain('--send-at: must be an RFC 3339 date-time');
  expect(described).toEqual([STACK, STACK]);
});

test("publish --team publishes through that team's topic, or its high-priority one; an unknown team is named", async () => {
  const where = ['--stack', STACK, '--pipeline', 'Billing'];
  const team = await cli('publish', ...EMAIL, ...where, '--team', 'invoices', '--json');
  expect(team).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(team.stdout)).toMatchObject({ team: 'invoices' });
  const high = await cli('publish', ...EMAIL, ...where, '--team', 'fraud', '--priority', 'high');
  expect(high).toMatchObject({ code: 0 });
  expect(high.stdout).toContain('for team fraud');
  expect(published.map((p) => p.get('TopicArn'))).toEqual([
    topic('billing-team-invoices'),
    topic('billing-team-fraud-high'),
  ]);
  // A team without high priority has no high-priority topic; a team the pipeline has not is named with those it has.
  const noHigh = await cli('publish', ...EMAIL, ...where, '--team', 'invoices', '--priority', 'high');
  expect(noHigh).toMatchObject({ code: 1, stderr: expect.stringContaining('Team invoices of pipeline Mail/Billing') });
  const unknown = await cli('publish', ...EMAIL, ...where, '--team', 'payroll');
  expect(unknown).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('has no team payroll: its teams are invoices, fraud'),
  });
  const none = await cli('publish', ...EMAIL, '--stack', STACK, '--pipeline', 'Marketing', '--team', 'payroll');
  expect(none.stderr).toContain('has no team payroll: it has no teams');
  expect(published).toHaveLength(2);
});
