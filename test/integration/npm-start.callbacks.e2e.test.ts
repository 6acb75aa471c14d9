/**
 * Issue 35's walkthrough as a newcomer runs it: `npm start` (the real command, its defaults) with
 * `emailPipeline:callbackUrl` naming a receiver on 127.0.0.1 that answers 503 to the first try of
 * each message id and 204 afterwards. Every request verifies with the `standardwebhooks` library
 * under the `CallbackSigningSecret` of outputs.json; the mailbox simulator's success, bounce and
 * complaint addresses come back as `delivered`, `bounced` and `complained`; each message id comes
 * again after its 503 with the same body, and never after its 204. The context is given as the
 * CDK CLI gives it to an app (CDK_CONTEXT_JSON), cdk.json untouched.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { Webhook } from 'standardwebhooks';
import { emulatorConfig } from '../../tools/dev/local/emulator-config';
import { REPO_ROOT } from '../../tools/dev/local/paths';
import { freePort, launch, type ManagedProcess } from '../../tools/dev/local/processes';
import type { LocalOutputs } from '../../tools/dev/local/state';
import { npmScript } from './npm-script';
import { until } from './support';

const START = npmScript('start');

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly answered: number;
}

let proc: ManagedProcess | undefined;
let server: Server | undefined;
afterAll(async () => {
  await proc?.stop();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
});

test('npm start with emailPipeline:callbackUrl: signed callbacks, each after a 503 once more, never after a 2xx', async () => {
  const received: Received[] = [];
  const tried = new Set<string>();
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const id = String(request.headers['webhook-id']);
      const answered = tried.has(id) ? 204 : 503;
      tried.add(id);
      received.push({ headers: request.headers, body, answered });
      response.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const callbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;

  const stateDir = mkdtempSync(path.join(tmpdir(), 'email-pipeline-callbacks-'));
  const lines: string[] = [];
  proc = await launch({
    name: 'npm start',
    command: START.command,
    args: START.args,
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      LOCAL_STATE_DIR: stateDir,
      LOCAL_CONSUMERS: '1',
      DYNAMODB_PORT: String(await freePort()),
      SQS_PORT: String(await freePort()),
      SES_PORT: String(await freePort()),
      STATUS_PORT: String(await freePort()),
      CDK_CONTEXT_JSON: JSON.stringify({ 'emailPipeline:callbackUrl': callbackUrl }),
    },
    onOutput: (line) => lines.push(line),
  });
  await until('the ready banner', () => lines.some((l) => l.includes('Local email pipeline ready')), 90_000);
  expect(lines.join('\n')).toContain(`POST ${callbackUrl}`);
  const outputs = JSON.parse(readFileSync(path.join(stateDir, 'outputs.json'), 'utf8')) as LocalOutputs;
  expect(outputs.CallbackSigningSecret).toMatch(/^whsec_/);

  const sns = new SNSClient(emulatorConfig(outputs.SnsEndpoint));
  const outcomes = { success: 'delivered', bounce: 'bounced', complaint: 'complained' } as const;
  for (const address of Object.keys(outcomes)) {
    await sns.send(
      new PublishCommand({
        TopicArn: outputs.TopicArn,
        Message: JSON.stringify({ to: `${address}@simulator.amazonses.com`, subject: 'Hi', text: 'Callbacks.' }),
        MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: `cb-${address}` } },
      }),
    );
  }
  sns.destroy();
  const data = (r: Received) => (JSON.parse(r.body) as { data: { key: string; status: string } }).data;
  const told = (key: string, status: string) =>
    received.some((r) => r.answered === 204 && data(r).key === key && data(r).status === status);
  // The first retry comes 15 to 30 s after a 503 (callbackRetryBaseSeconds' default, with jitter).
  await until(
    'delivered, bounced and complained told',
    () => Object.entries(outcomes).every(([address, status]) => told(`cb-${address}`, status)),
    120_000,
  );
  // Nothing left to try: the callbacks queue is empty, so no later request can come.
  const sqs = new SQSClient({ ...emulatorConfig(outputs.SqsEndpoint), useQueueUrlAsEndpoint: false });
  await until(
    'the callbacks queue empty',
    async () => {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: outputs.Callbacks!.QueueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible) === 0
      );
    },
    90_000,
  );
  sqs.destroy();

  const webhook = new Webhook(outputs.CallbackSigningSecret!);
  const byId = new Map<string, Received[]>();
  for (const request of received) {
    expect(webhook.verify(request.body, request.headers as Record<string, string>)).toEqual(JSON.parse(request.body));
    const id = String(request.headers['webhook-id']);
    byId.set(id, [...(byId.get(id) ?? []), request]);
  }
  for (const [id, tries] of byId) {
    expect([id, tries.map((t) => t.answered)]).toEqual([id, [503, 204]]);
    expect(tries[1]!.body).toBe(tries[0]!.body);
  }
}, 300_000);
