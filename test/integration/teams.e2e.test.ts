/**
 * Teams on the emulators, as `npm start` builds them: a topic per team feeding the team's queue, a
 * high-priority topic for the team with high priority feeding the high-priority queue. A message
 * is sent through its team's topic by the lane of that topic's queue, a high-priority one paced within
 * its team's share of the rate; a topic that is neither the
 * pipeline's nor a team's, subscribed to the queue behind the pipeline's back, is refused
 * (ForeignTopic) and never sent. Each team's keys are its own: the same key from two teams is two
 * emails, the status lookup answers for each team's key, a team with an SES tenant sends as it,
 * its tenant answers GetTenant (what `verify` reads), one team's cancel of a key leaves another
 * team's email of the same key to be sent, `deliveries --team` lists a team's keys by outcome
 * (bounced, dead-lettered) and no one else's, and a team with cancellers has its own status and
 * cancel URLs (`cancel --team` goes there) that refuse another team's keys.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetTenantCommand } from '@aws-sdk/client-sesv2';
import { CreateTopicCommand, PublishCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tenantSendingStatus } from '../../lib/cli/aws-rest';
import { ledgerKey, type DeliveryReport } from '../../lambdas/kernel/ledger/schema';
import { cancelDelivery } from '../../lambdas/status/cancel';
import { tenantStatuses } from '../../lib/cli/verify-command';
import { lookupDelivery } from '../../lambdas/status/lookup';
import { teamHighLane } from '../../lambdas/send-email/send/lane-rates';
import { laneItemId } from '../../lambdas/send-email/send/slot-store';
import { loadLocalSettings } from '../../tools/dev/local/settings';
import { drainQueue } from '../../tools/dev/local/queues';
import { LOCAL_CANCELLER, startStatusEndpoint } from '../../tools/dev/local/status-endpoint';
import {
  cliArgv,
  cliEnv,
  email,
  runCli,
  runProcess,
  startTestPipeline,
  until,
  writeCliOutputs,
  type TestPipeline,
} from './support';

const TEAMS = {
  // Cancellers of its own: billing has its own status and cancel URLs (security has none).
  billing: {
    senders: ['billing@example.com', 'invoices@example.com'],
    cancelers: ['arn:aws:iam::123456789012:role/billing-ops'],
  },
  security: { senders: ['security@example.com'], highPriority: true, sesTenant: true },
};

let p: TestPipeline;
let statusChanges: () => Promise<{ report: DeliveryReport; attributes: Record<string, string> }[]>;
beforeAll(async () => {
  p = await startTestPipeline({
    settings: { teams: TEAMS },
    ledger: true,
    consumers: [
      {},
      { lane: 'high', name: 'high-1' },
      { team: 'billing', name: 'billing-1' },
      { team: 'security', name: 'security-1' },
    ],
  });
  // Before anything is sent: the ledger asks whether the topic has subscribers at most once a minute.
  statusChanges = await watchStatusTopic();
}, 60_000);
afterAll(() => p?.stop());

/**
 * The local status server as npm start runs it: the status and cancel functions' code over the
 * local tables, with the pipeline's teams (billing's own URLs). Also the tables it reads.
 */
async function startLocalStatus() {
  const { resources } = p.pipeline;
  const settings = loadLocalSettings({ teams: TEAMS });
  const target = {
    db: DynamoDBDocumentClient.from(p.pipeline.dynamodb),
    ledgerTableName: resources.ledger.tableName,
    idempotencyTableName: resources.tableName,
    keyPrefix: settings.idempotencyKeyPrefix,
  };
  const status = await startStatusEndpoint({
    port: 0,
    lookup: (key, team) => lookupDelivery(target, key, team),
    cancel: (key, team) =>
      cancelDelivery(
        { ...target, dynamodb: p.pipeline.dynamodb, dedupeWindowSeconds: settings.dedupeWindowSeconds },
        key,
        LOCAL_CANCELLER,
        team,
      ),
    teams: settings.teams!,
  });
  return { status, target };
}

/**
 * Runs `cancel --json --team billing <key>` against the outputs in `stateDir` and expects billing's
 * key cancelled. A process of its own that this one waits for without blocking: the cancel URL is
 * served from this process.
 */
async function expectBillingCancels(stateDir: string, key: string): Promise<void> {
  const cancelled = await runProcess(process.execPath, cliArgv(['cancel', '--json', '--team', 'billing', key]), {
    env: cliEnv(stateDir),
  });
  expect({ code: cancelled.code, stderr: cancelled.stderr }).toEqual({ code: 0, stderr: '' });
  expect(JSON.parse(cancelled.stdout)).toMatchObject({
    outcome: 'cancelled',
    report: { key: `billing#${key}`, status: 'cancelled' },
  });
}

async function publish(topicArn: string, key: string, to: string, extra: object = {}): Promise<void> {
  await p.pipeline.sns.send(
    new PublishCommand({
      TopicArn: topicArn,
      Message: JSON.stringify({ ...email(to), ...extra }),
      MessageAttributes: { 'idempotency-key': { DataType: 'String', StringValue: key } },
    }),
  );
}

test("the team's SES tenant answers GetTenant as SES does (verify's signed request, and the SDK), ENABLED", async () => {
  const tenantName = p.pipeline.resources.teams?.security?.tenantName;
  expect(tenantName).toBe(`${p.name}-security`);
  const aws = {
    region: await p.pipeline.ses.config.region(),
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  const statuses = await tenantStatuses(
    (name) => tenantSendingStatus(aws, name, p.pipeline.options.endpoints.ses),
    [{ team: 'security', tenantName: tenantName! }],
  );
  expect(statuses).toEqual([{ team: 'security', tenantName, sendingStatus: 'ENABLED' }]);
  const { Tenant } = await p.pipeline.ses.send(new GetTenantCommand({ TenantName: tenantName }));
  expect(Tenant?.TenantArn).toMatch(new RegExp(`:tenant/${tenantName}/${Tenant?.TenantId}$`));
  expect(Tenant?.CreatedTimestamp).toBeInstanceOf(Date);
  await expect(p.pipeline.ses.send(new GetTenantCommand({ TenantName: `${p.name}-billing` }))).rejects.toMatchObject({
    name: 'NotFoundException',
  });
});

const decisionsOf = (key: string) => p.decisions().filter((d) => d.dedupeKey === key);

test('each team has its topics, and only the team with high priority a high-priority topic', () => {
  const teams = p.pipeline.resources.teams;
  expect(Object.keys(teams ?? {}).sort()).toEqual(['billing', 'security']);
  expect(teams?.billing?.highPriorityTopicArn).toBeUndefined();
  expect(teams?.security?.highPriorityTopicArn).toBeDefined();
  expect(teams?.billing?.senders).toEqual(TEAMS.billing.senders);
});

test("a message on a team's topic is sent once by its team's queue's consumer; on its high-priority topic, by the high lane", async () => {
  const teams = p.pipeline.resources.teams!;
  let normalKey = `billing-${p.name}`;
  let highKey = `security-${p.name}`;
  await publish(teams.billing!.topicArn, normalKey, p.address('billing'));
  await publish(teams.security!.highPriorityTopicArn!, highKey, p.address('security'));
  // Decisions name the dedupe key, which is the team's: <team>#<key>.
  normalKey = `billing#${normalKey}`;
  highKey = `security#${highKey}`;
  await until('both sent', () =>
    [normalKey, highKey].every((key) => decisionsOf(key).some((d) => d.decision === 'sent')),
  );
  await until('drained', () => p.pipeline.isDrained());
  // Sent once, by its queue's consumer only (a retry under load goes back to that queue), and mailed once.
  const lanes = (key: string) => new Set(decisionsOf(key).map((d) => d.consumer));
  const sent = (key: string) => decisionsOf(key).filter((d) => d.decision === 'sent').length;
  expect([sent(normalKey), [...lanes(normalKey)]]).toEqual([1, ['billing-1']]);
  expect([sent(highKey), [...lanes(highKey)]]).toEqual([1, ['high-1']]);
  const mails = await p.emails();
  for (const to of [p.address('billing'), p.address('security')]) {
    expect(mails.filter((e) => e.destination.to.includes(to))).toHaveLength(1);
  }
  // Security's high-priority mail paced within security's share: on its own reserve, or its queue's
  // lane held as that reserve's sibling; the pipeline's own reserve (none: the shares sum to 100) untouched.
  const { Items = [] } = await p.pipeline.dynamodb.send(
    new ScanCommand({
      TableName: p.pipeline.resources.tableName,
      FilterExpression: 'begins_with(id, :rate)',
      ExpressionAttributeValues: { ':rate': { S: 'rate#' } },
      ConsistentRead: true,
    }),
  );
  const prefix = p.pipeline.options.settings.idempotencyKeyPrefix;
  const leased = Items.map((item) => ({ id: item.id?.S, holder: item.holder?.S }));
  expect(leased.map((item) => item.id)).not.toContain(laneItemId(prefix, 'high'));
  expect(leased).toContainEqual({
    id: expect.stringMatching(/#(high|team):security$/),
    holder: teamHighLane('security'),
  });
});

test('a topic that is not the pipeline’s or a team’s is refused at once and never sent, even subscribed to the queue', async () => {
  // The emulator has no queue policies: this is the handler's own check, the one that holds on AWS too.
  const { TopicArn } = await p.pipeline.sns.send(new CreateTopicCommand({ Name: `${p.name}-team-intruder` }));
  await p.pipeline.sns.send(
    new SubscribeCommand({
      TopicArn,
      Protocol: 'sqs',
      Endpoint: p.pipeline.resources.queueArn,
      Attributes: { RawMessageDelivery: 'false' },
    }),
  );
  const key = `intruder-${p.name}`;
  const to = p.address('intruder');
  await publish(TopicArn!, key, to);
  const [letter] = await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, 1);
  expect(letter?.MessageAttributes?.['error-code']?.StringValue).toBe('ForeignTopic');
  await until('drained', () => p.pipeline.isDrained());
  expect((await p.emails()).filter((e) => e.destination.to.includes(to))).toHaveLength(0);
});

/** A queue subscribed to the delivery-status topic (SNS envelopes): what a subscriber would get. */
async function watchStatusTopic(): Promise<
  () => Promise<{ report: DeliveryReport; attributes: Record<string, string> }[]>
> {
  const { sqs, sns, resources } = p.pipeline;
  const { QueueUrl = '' } = await sqs.send(new CreateQueueCommand({ QueueName: `${p.name}-status-watch` }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  await sns.send(
    new SubscribeCommand({
      TopicArn: resources.ledger.deliveryStatusTopicArn,
      Protocol: 'sqs',
      Endpoint: Attributes?.QueueArn ?? '',
    }),
  );
  const seen: { report: DeliveryReport; attributes: Record<string, string> }[] = [];
  return async () => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    for (const m of Messages) {
      const envelope = JSON.parse(m.Body ?? '{}') as {
        Message: string;
        MessageAttributes?: Record<string, { Value: string }>;
      };
      const attributes = Object.fromEntries(
        Object.entries(envelope.MessageAttributes ?? {}).map(([k, v]) => [k, v.Value]),
      );
      seen.push({ report: JSON.parse(envelope.Message) as DeliveryReport, attributes });
    }
    return seen;
  };
}

test('the same key from two teams is two emails, and the status of each team’s key is its own', async () => {
  const teams = p.pipeline.resources.teams!;
  const key = `shared-${p.name}`;
  const [toBilling, toSecurity] = [p.address('shared-billing'), p.address('shared-security')];
  await publish(teams.billing!.topicArn, key, toBilling);
  await publish(teams.security!.topicArn, key, toSecurity);
  await until('both sent', () => p.decisions('sent').filter((d) => d.dedupeKey?.endsWith(`#${key}`)).length === 2);
  await until('drained', () => p.pipeline.isDrained());
  const mails = await p.emails();
  // Each mailed once, from its team's default sender.
  expect(mails.filter((e) => e.destination.to.includes(toBilling)).map((e) => e.from)).toEqual(['billing@example.com']);
  expect(mails.filter((e) => e.destination.to.includes(toSecurity)).map((e) => e.from)).toEqual([
    'security@example.com',
  ]);
  // Security has an SES tenant: its sends name it (the local SES layer checked it exists, with the
  // configuration set associated, and kept it); billing has none.
  expect(mails.filter((e) => e.destination.to.includes(toSecurity)).map((e) => e.tenantName)).toEqual([
    `${p.name}-security`,
  ]);
  expect(mails.filter((e) => e.destination.to.includes(toBilling)).map((e) => e.tenantName)).toEqual([undefined]);
  expect(decisionsOf(`billing#${key}`).filter((d) => d.decision === 'sent')).toHaveLength(1);
  expect(decisionsOf(`security#${key}`).filter((d) => d.decision === 'sent')).toHaveLength(1);

  const { resources } = p.pipeline;
  const target = {
    db: DynamoDBDocumentClient.from(p.pipeline.dynamodb),
    ledgerTableName: resources.ledger.tableName,
    idempotencyTableName: resources.tableName,
    keyPrefix: loadLocalSettings().idempotencyKeyPrefix,
  };
  // Sent, or delivered once the ledger has SES's Delivery event.
  expect(['sent', 'delivered']).toContain((await lookupDelivery(target, key, 'billing')).status);
  expect(['sent', 'delivered']).toContain((await lookupDelivery(target, key, 'security')).status);
  expect((await lookupDelivery(target, key)).status).toBe('unknown');

  // Each status change of a team's key names the team, in the body and as an attribute to filter on.
  // (The ledger knows a team's key as SES tags it: <team>#<key> is outside the tags' alphabet, so a hash.)
  const tagged = (team: string) => ledgerKey(`${team}#${key}`);
  let seen: { report: DeliveryReport; attributes: Record<string, string> }[] = [];
  await until(
    'both delivered on the status topic',
    async () => {
      seen = await statusChanges();
      return ['billing', 'security'].every((team) =>
        seen.some((c) => c.report.key === tagged(team) && c.report.status === 'delivered'),
      );
    },
    30_000,
  );
  for (const team of ['billing', 'security']) {
    const changes = seen.filter((c) => c.report.key === tagged(team));
    expect(changes.length).toBeGreaterThan(0);
    for (const { report, attributes } of changes) {
      expect(attributes).toEqual({ status: report.status, 'idempotency-key': tagged(team), team });
      // ...and the key as the team wrote it (taggable: letters, digits, - and _), and its order.
      expect(report).toMatchObject({ team, teamKey: key, sequence: expect.any(Number) });
    }
    // The ledger's line names the team too: Logs Insights counts outcomes by team from it.
    const lines = p.pipeline.lines.filter(
      (l) => l.json?.message === 'ledger event recorded' && l.json.dedupeKey === tagged(team),
    );
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.json?.team === team)).toBe(true);
  }

  // The operator's view: email-pipeline status --team NAME <key>, a real CLI process.
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'teams-cli-'));
  try {
    writeCliOutputs(stateDir, p);
    const billing = runCli(stateDir, ['status', '--json', '--team', 'billing', key]);
    expect(billing.status).toBe(0);
    expect(JSON.parse(billing.stdout)).toMatchObject({ key: `billing#${key}`, status: 'delivered' });
    const bare = runCli(stateDir, ['status', '--json', key]);
    expect(JSON.parse(bare.stdout)).toMatchObject({ key, status: 'unknown' });

    // A publisher's view: email-pipeline publish --team, through the team's (high-priority) topic.
    const cliKey = `cli-${p.name}`;
    const published = runCli(stateDir, [
      ...['publish', '--to', p.address('cli-security'), '--subject', 'Login', '--text', 'New device.'],
      ...['--team', 'security', '--priority', 'high', '--idempotency-key', cliKey, '--json'],
    ]);
    expect(published).toMatchObject({ status: 0 });
    expect(JSON.parse(published.stdout)).toMatchObject({ team: 'security', priority: 'high' });
    await until('sent by the high lane as security#<key>', () =>
      decisionsOf(`security#${cliKey}`).some((d) => d.decision === 'sent' && d.consumer === 'high-1'),
    );
    expect(
      runCli(stateDir, [
        'publish',
        '--to',
        p.address('x'),
        '--subject',
        'S',
        '--text',
        'T',
        '--team',
        'billing',
        '--priority',
        'high',
      ]),
    ).toMatchObject({ status: 1 });
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test('a team may send from any of its senders; another team’s sender is dead-lettered at once, naming from', async () => {
  const teams = p.pipeline.resources.teams!;
  const [toInvoices, toStolen] = [p.address('from-invoices'), p.address('from-stolen')];
  await publish(teams.billing!.topicArn, `invoices-${p.name}`, toInvoices, { from: 'invoices@example.com' });
  await publish(teams.billing!.topicArn, `stolen-${p.name}`, toStolen, { from: 'security@example.com' });
  const [letter] = await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, 1);
  expect(letter?.MessageAttributes?.['error-code']?.StringValue).toBe('InvalidMessage');
  expect(letter?.MessageAttributes?.['error-reason']?.StringValue).toMatch(/^from: must be one of team billing's/);
  await until('sent', () => p.decisions('sent').some((d) => d.dedupeKey === `billing#invoices-${p.name}`));
  await until('drained', () => p.pipeline.isDrained());
  const mails = await p.emails();
  expect(mails.filter((e) => e.destination.to.includes(toInvoices)).map((e) => e.from)).toEqual([
    'invoices@example.com',
  ]);
  expect(mails.filter((e) => e.destination.to.includes(toStolen))).toHaveLength(0);
});

test('an attachment under another team’s prefix is dead-lettered at once, naming attachments[0].s3Key', async () => {
  const teams = p.pipeline.resources.teams!;
  const to = p.address('foreign-file');
  await publish(teams.billing!.topicArn, `file-${p.name}`, to, {
    attachments: [{ filename: 'secret.pdf', contentType: 'application/pdf', s3Key: 'security/secret.pdf' }],
  });
  const [letter] = await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, 1);
  expect(letter?.MessageAttributes?.['error-code']?.StringValue).toBe('InvalidMessage');
  expect(letter?.MessageAttributes?.['error-reason']?.StringValue).toMatch(
    /^attachments\[0\]\.s3Key: must start with "billing\/"/,
  );
  await until('drained', () => p.pipeline.isDrained());
  expect((await p.emails()).filter((e) => e.destination.to.includes(to))).toHaveLength(0);
});

test("billing's cancel of a key (cancel --team billing) leaves security's email of the same key to be sent", async () => {
  const teams = p.pipeline.resources.teams!;
  // The pipeline's cancel URL (its teams' own URLs are not named in outputs.json here).
  const { status } = await startLocalStatus();
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'teams-cancel-'));
  try {
    writeCliOutputs(stateDir, p, { CancelUrl: `${status.cancelUrl}/deliveries/` });
    const key = `cancel-${p.name}`;
    await expectBillingCancels(stateDir, key);
    // The Cancelled write names the team: deliveries --team lists the key as billing wrote it.
    const cancelledOf = (team: string) =>
      runCli(stateDir, ['deliveries', '--outcome', 'cancelled', '--team', team]).stdout.includes(`  ${key}\n`);
    await until('billing lists its cancelled key', () => cancelledOf('billing'));
    expect(cancelledOf('security')).toBe(false);
    const [toBilling, toSecurity] = [p.address('cancel-billing'), p.address('cancel-security')];
    await publish(teams.billing!.topicArn, key, toBilling);
    await publish(teams.security!.topicArn, key, toSecurity);
    await until('security sent, billing suppressed', () => {
      const said = (who: string, what: string) => decisionsOf(`${who}#${key}`).some((d) => d.decision === what);
      return said('security', 'sent') && said('billing', 'cancelled');
    });
    await until('drained', () => p.pipeline.isDrained());
    const mails = await p.emails();
    expect(mails.filter((e) => e.destination.to.includes(toSecurity))).toHaveLength(1);
    expect(mails.filter((e) => e.destination.to.includes(toBilling))).toHaveLength(0);
    expect(decisionsOf(`billing#${key}`).filter((d) => d.decision === 'sent')).toHaveLength(0);
    // A name that cannot be a team is refused before anything is asked of the pipeline (nothing to serve).
    expect(runCli(stateDir, ['cancel', '--team', 'Billing', key])).toMatchObject({ status: 2 });
  } finally {
    await status.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test("billing's own URLs: cancel --team billing goes to billing's CancelUrl, and both refuse security's keys (403)", async () => {
  // With the pipeline's teams, as npm start runs it: billing's URLs under /teams/billing.
  const { status, target } = await startLocalStatus();
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'teams-urls-'));
  try {
    // No pipeline CancelUrl at all: a cancel that succeeds went to the team's own URL.
    writeCliOutputs(stateDir, p, {}, status.teams);
    const outputs = JSON.parse(readFileSync(path.join(stateDir, 'outputs.json'), 'utf8')) as {
      Teams: Record<string, { StatusUrl?: string; CancelUrl?: string }>;
    };
    expect(outputs.Teams.billing).toMatchObject({
      StatusUrl: `${status.url}/teams/billing/deliveries/`,
      CancelUrl: `${status.url}/teams/billing/cancel/deliveries/`,
    });
    expect(outputs.Teams.security).not.toHaveProperty('StatusUrl');
    const { StatusUrl: statusUrl, CancelUrl: cancelUrl } = outputs.Teams.billing!;
    const key = `own-url-${p.name}`;
    await expectBillingCancels(stateDir, key);
    // status --team reads the tables (as on AWS); billing's status URL answers the same.
    expect(JSON.parse(runCli(stateDir, ['status', '--json', '--team', 'billing', key]).stdout)).toMatchObject({
      key: `billing#${key}`,
      status: 'cancelled',
    });
    const read = await fetch(`${statusUrl}${key}`);
    expect({ status: read.status, body: await read.json() }).toMatchObject({
      status: 200,
      body: { key: `billing#${key}`, status: 'cancelled' },
    });
    // Security's key, asked at billing's URLs: refused, and security's key is left as it was.
    const refusal = { message: `This URL answers for team billing's keys only, not team "security"'s` };
    const otherRead = await fetch(`${statusUrl}${key}?team=security`);
    expect({ status: otherRead.status, body: await otherRead.json() }).toEqual({ status: 403, body: refusal });
    const otherCancel = await fetch(`${cancelUrl}${key}?team=security`, { method: 'DELETE' });
    expect({ status: otherCancel.status, body: await otherCancel.json() }).toEqual({ status: 403, body: refusal });
    expect(await lookupDelivery(target, key, 'security')).toMatchObject({ key: `security#${key}`, status: 'unknown' });
    // Security has no URL of its own: nothing is served under /teams/security.
    expect((await fetch(`${status.url}/teams/security/deliveries/${key}`)).status).toBe(404);
  } finally {
    await status.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test("deliveries --team lists a team's bounced and dead-lettered keys as the team wrote them, and no one else's", async () => {
  const teams = p.pipeline.resources.teams!;
  const key = `bounced-${p.name}`;
  const bare = `bare-${key}`;
  await publish(teams.billing!.topicArn, key, `bounce+billing-${key}@simulator.amazonses.com`);
  await publish(teams.security!.topicArn, key, `bounce+security-${key}@simulator.amazonses.com`);
  await publish(p.pipeline.resources.topicArn, bare, `bounce+${bare}@simulator.amazonses.com`);
  // Dead-lettered before any send (another team's sender): only the dead-letter mark names its team.
  const dead = `dead-${p.name}`;
  await publish(teams.billing!.topicArn, dead, p.address('dead'), { from: 'security@example.com' });
  const [letter] = await drainQueue(p.pipeline.sqs, p.pipeline.resources.deadLetterQueueUrl, 1);
  expect(letter?.MessageAttributes?.['dedupe-key']?.StringValue).toBe(`billing#${dead}`);

  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'teams-deliveries-'));
  try {
    writeCliOutputs(stateDir, p);
    type Row = { key: string; status: string; team?: string; teamKey?: string };
    const rows = (...args: string[]): Row[] => {
      const run = runCli(stateDir, ['deliveries', '--json', ...args]);
      expect({ status: run.status, stderr: run.stderr }).toMatchObject({ status: 0 });
      return run.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Row);
    };
    const billingKey = ledgerKey(`billing#${key}`);
    const securityKey = ledgerKey(`security#${key}`);
    await until(
      'the three bounces indexed',
      () => {
        const keys = rows('--outcome', 'bounced').map((r) => r.key);
        return [billingKey, securityKey, bare].every((k) => keys.includes(k));
      },
      30_000,
    );

    // Only billing's, as billing wrote them; the bare key and security's never.
    const billing = rows('--outcome', 'bounced', '--team', 'billing');
    expect(billing.every((r) => r.team === 'billing')).toBe(true);
    expect(billing.find((r) => r.key === billingKey)).toEqual(
      expect.objectContaining({ status: 'bounced', team: 'billing', teamKey: key }),
    );
    expect(billing.some((r) => r.key === securityKey || r.key === bare)).toBe(false);
    const text = runCli(stateDir, ['deliveries', '--outcome', 'bounced', '--team', 'billing']);
    expect(text.stdout).toMatch(new RegExp(`^\\S+ {2}${key}$`, 'm'));
    expect(text.stderr).toMatch(/key\(s\) of team billing bounced/);

    // Without --team every key is listed, a team's named with its team.
    const all = runCli(stateDir, ['deliveries', '--outcome', 'bounced']);
    expect(all.stdout).toMatch(new RegExp(`^\\S+ {2}${key} {2}team billing$`, 'm'));
    expect(all.stdout).toMatch(new RegExp(`^\\S+ {2}${key} {2}team security$`, 'm'));
    expect(all.stdout).toMatch(new RegExp(`^\\S+ {2}${bare}$`, 'm'));

    // The dead letter, which SES never saw, is billing's too.
    await until('the dead letter indexed', () =>
      rows('--outcome', 'dead-lettered', '--team', 'billing').some((r) => r.teamKey === dead),
    );
    expect(rows('--outcome', 'dead-lettered', '--team', 'security').some((r) => r.teamKey === dead)).toBe(false);
    expect(runCli(stateDir, ['deliveries', '--outcome', 'bounced', '--team', 'Billing'])).toMatchObject({ status: 2 });
    // A team the pipeline does not have lists nothing, and says which teams it has.
    const unknown = runCli(stateDir, ['deliveries', '--outcome', 'bounced', '--team', 'sales']);
    expect(unknown).toMatchObject({ status: 0, stdout: '' });
    expect(unknown.stderr).toContain('has no team sales now (its teams: billing, security)');
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
});
