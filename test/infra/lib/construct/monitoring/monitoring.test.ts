import { SettingsError } from '../../../../../lib/settings';
import {
  ALARM_NAMES,
  AT_A_GLANCE,
  AlarmName,
  AlarmSeverity,
  DEFAULT_ALARMS,
  DEFAULT_RUNBOOK_URL,
  HANDLER_METRICS,
  LEDGER_METRICS,
  OPERATOR_DEAD_LETTER_CODES,
  runbookAnchor,
} from '../../../../../lib/construct/monitoring/monitoring';
import { ALARM_CATALOG } from '../../../../../lib/construct/monitoring/alarm-catalog';
import { CALLBACK_PROPS, flattenJoin, synthDefault, synthesize, Synthesized } from '../../../helpers';

/** The alarms every pipeline has (the callbacks' only come with callbacks, the tenants' with tenants). */
const EVERY_PIPELINE = ALARM_NAMES.filter((name) => ALARM_CATALOG[name].requires === undefined);

/** Callbacks, and a team with an SES tenant. */
const EVERY_PART = {
  ...CALLBACK_PROPS,
  teams: { ...CALLBACK_PROPS.teams, support: { senders: ['support@example.com'], sesTenant: true } },
};

let callbacks: Synthesized | undefined;
/** A pipeline with callbacks and a tenant, synthesized once per file: it has every alarm. */
function synthWithCallbacks(): Synthesized {
  callbacks ??= synthesize(EVERY_PART);
  return callbacks;
}

/** A pipeline that has the alarm `name`. */
const synthFor = (name: AlarmName): Synthesized =>
  ALARM_CATALOG[name].requires === undefined ? synthDefault() : synthWithCallbacks();

type Alarm = { Properties: Record<string, any> };

function alarms(s: Synthesized): Alarm[] {
  return Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as Alarm[];
}

function capitalized(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** A per-team alarm's name ends with its team's: the first team's here (billing). */
const teamSuffix = (name: AlarmName): string => (ALARM_CATALOG[name].perTeam ? '-billing' : '');

/** The alarm of that name (`<prefix>-<severity>-<Name>`, and `-<team>` for a per-team one: billing's). */
function alarmNamed(s: Synthesized, name: AlarmName): Alarm {
  const found = alarms(s).filter((a) =>
    String(a.Properties.AlarmName).endsWith(`-${capitalized(name)}${teamSuffix(name)}`),
  );
  expect(found).toHaveLength(1);
  return found[0];
}

function topicRef(s: Synthesized, severity: AlarmSeverity): { Ref: string } {
  const m = s.stack.monitoring!;
  return s.stack.resolve((severity === 'page' ? m.alarmTopic : m.warningTopic).topicArn);
}

/** The metrics of an alarm, single or math: each MetricStat's metric name and dimensions. */
function watchedMetrics(alarm: Alarm): Array<{ MetricName: string; Namespace: string; Dimensions?: unknown[] }> {
  if (alarm.Properties.MetricName !== undefined) return [alarm.Properties as any];
  return (alarm.Properties.Metrics as any[]).filter((m) => m.MetricStat).map((m) => m.MetricStat.Metric);
}

/** What each alarm must be by default: severity, metric(s), threshold, datapoints of periods, period. */
const EXPECTED: Record<
  AlarmName,
  { severity: AlarmSeverity; metric: string; threshold: number; datapoints: [number, number]; period: number }
> = {
  sesComplaintRateWarning: {
    severity: 'page',
    metric: 'Reputation.ComplaintRate',
    threshold: 0.0005,
    datapoints: [1, 1],
    period: 900,
  },
  sesComplaintRate: {
    severity: 'page',
    metric: 'Reputation.ComplaintRate',
    threshold: 0.001,
    datapoints: [1, 1],
    period: 900,
  },
  sesBounceRateWarning: {
    severity: 'page',
    metric: 'Reputation.BounceRate',
    threshold: 0.02,
    datapoints: [1, 1],
    period: 900,
  },
  sesBounceRate: {
    severity: 'page',
    metric: 'Reputation.BounceRate',
    threshold: 0.05,
    datapoints: [1, 1],
    period: 900,
  },
  retriesStalled: { severity: 'page', metric: 'RetryAgeSeconds', threshold: 3600, datapoints: [3, 3], period: 300 },
  backlogTooLarge: {
    severity: 'page',
    metric: 'ApproximateNumberOfMessagesDelayed',
    threshold: 14 * 1800,
    datapoints: [3, 3],
    period: 300,
  },
  teamBacklogTooLarge: {
    severity: 'page',
    metric: 'ApproximateNumberOfMessagesDelayed',
    threshold: 14 * 1800,
    datapoints: [3, 3],
    period: 300,
  },
  systemicFailures: { severity: 'page', metric: 'SystemicFailures', threshold: 0, datapoints: [1, 1], period: 300 },
  functionThrottles: { severity: 'page', metric: 'Throttles', threshold: 0, datapoints: [5, 5], period: 60 },
  operatorDeadLetters: {
    severity: 'page',
    metric: 'PermanentFailuresByReason',
    threshold: 0,
    datapoints: [1, 1],
    period: 300,
  },
  subscriptionDeadLetters: {
    severity: 'page',
    metric: 'NumberOfMessagesSent',
    threshold: 0,
    datapoints: [1, 1],
    period: 300,
  },
  unconfirmedResends: { severity: 'page', metric: 'UnconfirmedResends', threshold: 0, datapoints: [1, 1], period: 300 },
  ledgerStalled: {
    severity: 'page',
    metric: 'ApproximateAgeOfOldestMessage',
    threshold: 900,
    datapoints: [3, 3],
    period: 300,
  },
  ledgerSilent: { severity: 'page', metric: 'LedgerEventsRecorded', threshold: 0, datapoints: [2, 2], period: 900 },
  ambiguousSends: { severity: 'warn', metric: 'AmbiguousSends', threshold: 0, datapoints: [1, 1], period: 300 },
  functionErrors: { severity: 'warn', metric: 'Errors', threshold: 0, datapoints: [1, 1], period: 300 },
  ledgerFunctionErrors: { severity: 'warn', metric: 'Errors', threshold: 0, datapoints: [1, 1], period: 300 },
  statusFunctionErrors: { severity: 'warn', metric: 'Errors', threshold: 0, datapoints: [1, 1], period: 300 },
  completionWriteFailures: {
    severity: 'warn',
    metric: 'CompletionWriteFailures',
    threshold: 0,
    datapoints: [1, 1],
    period: 300,
  },
  snsDeliveryFailures: {
    severity: 'warn',
    metric: 'NumberOfNotificationsFailed',
    threshold: 0,
    datapoints: [1, 1],
    period: 300,
  },
  publisherDeadLetters: {
    severity: 'warn',
    metric: 'NumberOfMessagesSent',
    threshold: 0,
    datapoints: [1, 1],
    period: 300,
  },
  deadLetterAge: {
    severity: 'warn',
    metric: 'ApproximateAgeOfOldestMessage',
    threshold: 10 * 24 * 3600,
    datapoints: [1, 1],
    period: 3600,
  },
  ledgerDeadLetters: {
    severity: 'warn',
    metric: 'ApproximateNumberOfMessagesVisible',
    threshold: 0,
    datapoints: [1, 1],
    period: 300,
  },
  ledgerUntrustedEvents: {
    severity: 'warn',
    metric: 'LedgerUntrustedEvents',
    threshold: 0,
    datapoints: [1, 1],
    period: 300,
  },
  retryingTooLong: { severity: 'warn', metric: 'RetryAgeSeconds', threshold: 900, datapoints: [2, 3], period: 300 },
  tableThrottles: { severity: 'warn', metric: 'WriteThrottleEvents', threshold: 0, datapoints: [2, 3], period: 300 },
  tableSystemErrors: { severity: 'warn', metric: 'SystemErrors', threshold: 0, datapoints: [1, 1], period: 300 },
  sesRejects: { severity: 'warn', metric: 'Rendering Failure', threshold: 0, datapoints: [1, 1], period: 300 },
  rateLeaseRepairs: { severity: 'warn', metric: 'RateLeaseRepairs', threshold: 0, datapoints: [1, 1], period: 300 },
  cancelFunctionErrors: { severity: 'warn', metric: 'Errors', threshold: 0, datapoints: [1, 1], period: 300 },
  scheduleFunctionErrors: { severity: 'warn', metric: 'Errors', threshold: 0, datapoints: [1, 1], period: 300 },
  scheduledMailLate: {
    severity: 'warn',
    metric: 'ApproximateAgeOfOldestMessage',
    threshold: 1200,
    datapoints: [2, 2],
    period: 300,
  },
  callbackDeadLetters: {
    severity: 'warn',
    metric: 'ApproximateNumberOfMessagesVisible',
    threshold: 0,
    datapoints: [1, 1],
    period: 300,
  },
  callbacksLate: {
    severity: 'warn',
    metric: 'ApproximateAgeOfOldestMessage',
    threshold: 3600,
    datapoints: [2, 2],
    period: 300,
  },
  callbacksDisabled: { severity: 'warn', metric: 'CallbacksDisabled', threshold: 0, datapoints: [1, 1], period: 300 },
  sesTenantPaused: { severity: 'warn', metric: 'TriggeredRules', threshold: 0, datapoints: [1, 1], period: 300 },
};

describe('alarms', () => {
  test('every alarm is expected here, and the defaults agree', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...ALARM_NAMES].sort());
    for (const name of ALARM_NAMES) {
      const d = DEFAULT_ALARMS[name];
      const e = EXPECTED[name];
      expect([name, d.severity, d.threshold, d.datapointsToAlarm, d.evaluationPeriods, d.periodSeconds]).toEqual([
        name,
        e.severity,
        e.threshold,
        ...e.datapoints,
        e.period,
      ]);
    }
  });

  test('there is one alarm per documented alarm and no other; the callbacks’, tenants’ and teams’ only with them', () => {
    expect(alarms(synthDefault())).toHaveLength(EVERY_PIPELINE.length);
    expect(EVERY_PIPELINE.length).toBe(ALARM_NAMES.length - 5);
    // Two teams (billing, support): a per-team alarm twice; no tenant.
    expect(alarms(synthesize(CALLBACK_PROPS))).toHaveLength(ALARM_NAMES.length - 1 + 1);
    expect(alarms(synthWithCallbacks())).toHaveLength(ALARM_NAMES.length + 1);
  });

  test("a team's backlog alarm watches that team's queue, and no other queue", () => {
    const s = synthWithCallbacks();
    const queueOf = (team: string) =>
      s.stack.getLogicalId(s.stack.pipeline.teamQueues[team]!.node.defaultChild as never);
    for (const [team, other] of [
      ['billing', 'support'],
      ['support', 'billing'],
    ] as const) {
      const alarm = alarms(s).find((a) => String(a.Properties.AlarmName).endsWith(`-TeamBacklogTooLarge-${team}`))!;
      const watched = JSON.stringify(watchedMetrics(alarm));
      expect(watched).toContain(queueOf(team));
      expect(watched).not.toContain(queueOf(other));
      expect(flattenJoin(alarm.Properties.AlarmDescription)).toContain(`team ${team}`);
    }
  });

  test.each(ALARM_NAMES)('%s: its severity, threshold, datapoints, period, metric and action', (name) => {
    const s = synthFor(name);
    const e = EXPECTED[name];
    const a = alarmNamed(s, name);
    const topic = topicRef(s, e.severity);
    expect(a.Properties).toEqual(
      expect.objectContaining({
        AlarmName: `EmailPipeline-Monitoring-${e.severity}-${capitalized(name)}${teamSuffix(name)}`,
        Threshold: e.threshold,
        ComparisonOperator: 'GreaterThanThreshold',
        DatapointsToAlarm: e.datapoints[0],
        EvaluationPeriods: e.datapoints[1],
        AlarmActions: [topic],
        OKActions: [topic],
      }),
    );
    const period = a.Properties.Period ?? (a.Properties.Metrics as any[]).find((m) => m.MetricStat).MetricStat.Period;
    expect(period).toBe(e.period);
    expect(watchedMetrics(a).map((m) => m.MetricName)).toContain(e.metric);
    expect(a.Properties.TreatMissingData).toBe(
      name.startsWith('ses') && name.includes('Rate') ? 'ignore' : 'notBreaching',
    );
  });

  test.each(ALARM_NAMES)('%s: its description links its runbook section and says its severity', (name) => {
    const description = flattenJoin(alarmNamed(synthFor(name), name).Properties.AlarmDescription);
    expect(description).toMatch(new RegExp(`^\\[${EXPECTED[name].severity === 'page' ? 'PAGE' : 'WARN'}\\] `));
    expect(description.endsWith(`Runbook: ${DEFAULT_RUNBOOK_URL}#${runbookAnchor(name)}`)).toBe(true);
    expect(description.length).toBeLessThanOrEqual(1024);
  });

  test('no paging alarm watches AmbiguousSends: a hung SES whose sends the ledger confirms does not page', () => {
    const s = synthDefault();
    const paging = alarms(s).filter(
      (a) => JSON.stringify(a.Properties.AlarmActions) === JSON.stringify([topicRef(s, 'page')]),
    );
    expect(paging.length).toBe(EVERY_PIPELINE.filter((n) => EXPECTED[n].severity === 'page').length);
    for (const a of paging) expect(JSON.stringify(a.Properties)).not.toContain(HANDLER_METRICS.ambiguousSends);
  });

  test('alarm names are unique and carry the stack and construct', () => {
    const names = alarms(synthDefault()).map((a) => a.Properties.AlarmName);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^EmailPipeline-Monitoring-(page|warn)-[A-Z]\w+$/);
  });

  test("reputation alarms watch the larger of the owned configuration set's rate and the account's", () => {
    const s = synthDefault();
    const configurationSet = s.stack.resolve(s.stack.pipeline.ledger.configurationSetName);
    const names = ['sesComplaintRateWarning', 'sesComplaintRate', 'sesBounceRateWarning', 'sesBounceRate'] as const;
    for (const name of names) {
      const a = alarmNamed(s, name);
      // Metric math, not a single metric: a wrong dimension cannot hide the account's rate.
      expect(a.Properties.MetricName).toBeUndefined();
      const metrics = a.Properties.Metrics as any[];
      const alarmed = metrics.filter((m) => m.ReturnData !== false);
      expect(alarmed).toHaveLength(1);
      // Each series FILLed, so a series with no point (a dimension SES does not publish) cannot silence MAX.
      expect(alarmed[0].Expression).toMatch(/^MAX\(\[FILL\(\w+, 0\), FILL\(\w+, 0\)\]\)$/);
      const rate = EXPECTED[name].metric;
      const series = metrics.filter((m) => m.MetricStat);
      expect(series.map((m) => m.MetricStat.Metric)).toEqual(
        expect.arrayContaining([
          {
            Namespace: 'AWS/SES',
            MetricName: rate,
            Dimensions: [{ Name: 'ses:configuration-set', Value: configurationSet }],
          },
          { Namespace: 'AWS/SES', MetricName: rate },
        ]),
      );
      expect(series).toHaveLength(2);
      expect(series.every((m) => m.MetricStat.Stat === 'Maximum' && m.ReturnData === false)).toBe(true);
      // Both series are the expression's arguments.
      for (const m of series) expect(alarmed[0].Expression).toContain(m.Id);
      expect(flattenJoin(a.Properties.AlarmDescription)).toContain('or of the account (the larger of the two');
    }
  });

  test('the first row shows the same larger rate as the reputation alarms', () => {
    const dashboards = Object.values(synthDefault().template.findResources('AWS::CloudWatch::Dashboard'));
    const [first] = JSON.parse(flattenJoin(dashboards[0].Properties.DashboardBody)).widgets;
    const body = JSON.stringify(first.properties.metrics);
    expect(body).toContain('MAX([FILL(configurationSetBounceRate, 0), FILL(accountBounceRate, 0)])');
    expect(body).toContain('MAX([FILL(configurationSetComplaintRate, 0), FILL(accountComplaintRate, 0)])');
  });

  test('reputation alarms fall back to the account with a configuration set given by name', () => {
    const s = synthesize({ configurationSetName: 'transactional' });
    const a = alarmNamed(s, 'sesComplaintRate');
    expect(a.Properties.Dimensions).toBeUndefined();
    expect(a.Properties.AlarmDescription).toContain('account-level rate stands in');
  });

  test('the backlog counts visible, delayed and in-flight messages of the work queue and the high-priority queue', () => {
    const s = synthDefault();
    const a = alarmNamed(s, 'backlogTooLarge');
    const metrics = (a.Properties.Metrics as any[]).filter((m) => m.MetricStat).map((m) => m.MetricStat.Metric);
    const names = [
      'ApproximateNumberOfMessagesDelayed',
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateNumberOfMessagesVisible',
    ];
    for (const queue of [s.ids.queue, s.ids.highPriorityQueue]) {
      const ofQueue = metrics.filter(
        (m) =>
          JSON.stringify(m.Dimensions) ===
          JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }]),
      );
      expect(ofQueue.map((m) => m.MetricName).sort()).toEqual(names);
    }
    expect(metrics).toHaveLength(6);
    const expression = (a.Properties.Metrics as any[]).find((m) => m.Expression).Expression as string;
    // Summed, each filled: a queue without data does not blank the sum.
    for (const m of (a.Properties.Metrics as any[]).filter((x) => x.MetricStat))
      expect(expression).toContain(`FILL(${m.Id}, 0)`);
  });

  test('retriesStalled reads the retry age of both lanes: the metric has no lane or queue dimension', () => {
    const [metric] = watchedMetrics(alarmNamed(synthDefault(), 'retriesStalled'));
    expect(metric.MetricName).toBe('RetryAgeSeconds');
    expect(metric.Dimensions).toEqual([{ Name: 'service', Value: 'email-pipeline' }]);
  });

  test('the backlog threshold follows maxSendRate', () => {
    expect(alarmNamed(synthesize({ maxSendRate: 50 }), 'backlogTooLarge').Properties.Threshold).toBe(50 * 1800);
  });

  test("dead letters split by fault: the operator's codes page, the rest of the arrivals warn", () => {
    const s = synthDefault();
    const reasons = (a: Alarm) =>
      watchedMetrics(a)
        .filter((m) => m.MetricName === HANDLER_METRICS.permanentFailuresByReason)
        .map((m) => (m.Dimensions as Array<{ Name: string; Value: string }>).find((d) => d.Name === 'reason')!.Value)
        .sort();
    expect(reasons(alarmNamed(s, 'operatorDeadLetters'))).toEqual([...OPERATOR_DEAD_LETTER_CODES].sort());
    const publisher = alarmNamed(s, 'publisherDeadLetters');
    expect(reasons(publisher)).toEqual([...OPERATOR_DEAD_LETTER_CODES].sort());
    const expression = (publisher.Properties.Metrics as any[]).find((m) => m.ReturnData !== false && m.Expression);
    expect(expression.Expression).toMatch(/^FILL\(arrived, 0\) - SUM\(/);
    const arrived = (publisher.Properties.Metrics as any[]).find((m) => m.Id === 'arrived').MetricStat;
    expect(arrived.Metric.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [s.ids.deadLetterQueue, 'QueueName'] } },
    ]);
    expect(OPERATOR_DEAD_LETTER_CODES).not.toContain('KeyReusedWithDifferentContent');
    expect(OPERATOR_DEAD_LETTER_CODES).not.toContain('InvalidMessage');
  });

  test('a silent ledger compares emails sent with SES events recorded', () => {
    const a = alarmNamed(synthDefault(), 'ledgerSilent');
    expect(
      watchedMetrics(a)
        .map((m) => m.MetricName)
        .sort(),
    ).toEqual(['EmailsSent', 'LedgerEventsRecorded']);
    expect((a.Properties.Metrics as any[]).find((m) => m.Expression).Expression).toBe(
      'IF(FILL(recorded, 0) == 0, FILL(sent, 0), 0)',
    );
  });

  test('an alarm can be tuned, its severity too', () => {
    const s = synthesize({}, undefined, {
      monitoring: {
        alarms: {
          retriesStalled: { threshold: 600, evaluationPeriods: 6, datapointsToAlarm: 4, periodSeconds: 60 },
          ambiguousSends: { severity: 'page' },
        },
      },
    });
    expect(alarmNamed(s, 'retriesStalled').Properties).toMatchObject({
      Threshold: 600,
      EvaluationPeriods: 6,
      DatapointsToAlarm: 4,
      Period: 60,
    });
    expect(alarmNamed(s, 'ambiguousSends').Properties.AlarmActions).toEqual([topicRef(s, 'page')]);
  });

  test('tuning only evaluationPeriods keeps an every-period alarm every period', () => {
    const s = synthesize({}, undefined, { monitoring: { alarms: { functionErrors: { evaluationPeriods: 3 } } } });
    expect(alarmNamed(s, 'functionErrors').Properties).toMatchObject({ EvaluationPeriods: 3, DatapointsToAlarm: 3 });
  });

  test('an alarm can be switched off', () => {
    const s = synthesize({}, undefined, { monitoring: { alarms: { sesBounceRate: { enabled: false } } } });
    expect(alarms(s).some((a) => String(a.Properties.AlarmName).endsWith('-SesBounceRate'))).toBe(false);
    expect(alarms(s)).toHaveLength(EVERY_PIPELINE.length - 1);
  });

  test('a bad tuning fails the synth naming the setting', () => {
    expect(() =>
      synthesize({}, undefined, { monitoring: { alarms: { functionErrors: { periodSeconds: 90 } } } }),
    ).toThrow(/alarms\.functionErrors\.periodSeconds=90/);
    expect(() => synthesize({}, undefined, { monitoring: { alarms: { functionErrors: { threshold: -1 } } } })).toThrow(
      SettingsError,
    );
    expect(() =>
      synthesize({}, undefined, { monitoring: { alarms: { ledgerSilent: { datapointsToAlarm: 3 } } } }),
    ).toThrow(/alarms\.ledgerSilent\.datapointsToAlarm=3/);
  });

  test('OK notifications can be turned off', () => {
    const s = synthesize({}, undefined, { monitoring: { notifyOnOk: false } });
    for (const a of alarms(s)) expect(a.Properties.OKActions).toBeUndefined();
  });

  test('the alarm name prefix and the runbook URL are props', () => {
    const s = synthesize({}, undefined, {
      monitoring: { alarmNamePrefix: 'mail-prod', runbookUrl: 'https://wiki.example.com/email' },
    });
    const a = alarmNamed(s, 'unconfirmedResends');
    expect(a.Properties.AlarmName).toBe('mail-prod-page-UnconfirmedResends');
    expect(a.Properties.AlarmDescription).toContain('https://wiki.example.com/email#alarm-unconfirmedresends');
  });
});

describe('reputation pause', () => {
  const pauseStatements = (s: Synthesized) =>
    Object.values(s.template.findResources('AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>)
      .filter((st) => ([] as string[]).concat(st.Action).includes('ses:PutConfigurationSetSendingOptions'));

  test('is off by default', () => {
    expect(pauseStatements(synthDefault())).toHaveLength(0);
    expect(synthDefault().stack.monitoring!.pauseFunction).toBeUndefined();
  });

  test('when on, the review-level alarms invoke a function that may pause only this configuration set', () => {
    const s = synthesize({}, undefined, { monitoring: { pauseSendingOnReputation: true } });
    const fn = s.stack.resolve(s.stack.monitoring!.pauseFunction!.functionArn);
    for (const name of ['sesBounceRate', 'sesComplaintRate'] as const) {
      expect(alarmNamed(s, name).Properties.AlarmActions).toEqual([topicRef(s, 'page'), fn]);
    }
    for (const name of ['sesBounceRateWarning', 'sesComplaintRateWarning'] as const) {
      expect(alarmNamed(s, name).Properties.AlarmActions).toEqual([topicRef(s, 'page')]);
    }
    const statements = pauseStatements(s);
    expect(statements).toHaveLength(1);
    expect(JSON.stringify(statements[0].Resource)).toContain(':configuration-set/');
    expect(JSON.stringify(statements[0].Resource)).toContain(
      JSON.stringify(s.stack.resolve(s.stack.pipeline.ledger.configurationSetName)),
    );
    s.template.hasResourceProperties('AWS::Lambda::Permission', {
      Principal: 'lambda.alarms.cloudwatch.amazonaws.com',
    });
  });
});

describe('alarm topics', () => {
  test.each(['page', 'warn'] as const)(
    'the %s topic is encrypted and TLS only, and lets CloudWatch alarms of this account publish',
    (severity) => {
      const s = synthDefault();
      const topicId = topicRef(s, severity).Ref;
      const topic = s.template.toJSON().Resources[topicId];
      expect(topic.Properties.KmsMasterKeyId).toBeDefined();
      const policy = Object.values(s.template.findResources('AWS::SNS::TopicPolicy')).find((p) =>
        p.Properties.Topics.some((t: { Ref: string }) => t.Ref === topicId),
      )!;
      const statements: Array<Record<string, any>> = policy.Properties.PolicyDocument.Statement;
      expect(statements).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
      expect(statements).toContainEqual(
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'sns:Publish',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Condition: expect.objectContaining({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
        }),
      );
    },
  );

  test('the two topics are apart, each with its own key', () => {
    const s = synthDefault();
    const resources = s.template.toJSON().Resources;
    const page = resources[topicRef(s, 'page').Ref].Properties.KmsMasterKeyId;
    const warn = resources[topicRef(s, 'warn').Ref].Properties.KmsMasterKeyId;
    expect(topicRef(s, 'page')).not.toEqual(topicRef(s, 'warn'));
    expect(page).not.toEqual(warn);
  });

  test('subscribes alarmEmail to the paging topic and warningEmail to the warning topic', () => {
    const s = synthesize({}, undefined, {
      monitoring: { alarmEmail: 'oncall@example.com', warningEmail: 'team@example.com' },
    });
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: topicRef(s, 'page'),
    });
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'team@example.com',
      TopicArn: topicRef(s, 'warn'),
    });
  });

  test('a bad warningEmail fails the synth naming it', () => {
    expect(() => synthesize({}, undefined, { monitoring: { warningEmail: 'team' } })).toThrow(/warningEmail/);
  });

  test('has no email subscription by default', () => {
    const subs = Object.values(synthDefault().template.findResources('AWS::SNS::Subscription'));
    expect(subs.filter((x) => x.Properties.Protocol === 'email')).toHaveLength(0);
  });
});

describe('outputs', () => {
  test('name the paging and warning topics and the three log groups', () => {
    const s = synthDefault();
    const outputs = s.template.toJSON().Outputs;
    expect(outputs.AlarmTopicArn.Value).toEqual(topicRef(s, 'page'));
    expect(outputs.WarningTopicArn.Value).toEqual(topicRef(s, 'warn'));
    const names = s.stack.pipeline.logGroupNames;
    expect(outputs.SendLogGroupName.Value).toBe(names.send);
    expect(outputs.LedgerLogGroupName.Value).toBe(names.ledger);
    expect(outputs.StatusLogGroupName.Value).toBe(names.status);
  });
});

describe('dashboard', () => {
  type Widget = { type: string; x: number; y: number; properties: Record<string, any> };
  function widgets(s: Synthesized): Widget[] {
    const dashboards = Object.values(s.template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    return JSON.parse(flattenJoin(dashboards[0].Properties.DashboardBody)).widgets;
  }
  const titled = (s: Synthesized, title: string) => {
    const found = widgets(s).filter((w) => w.properties.title === title);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const labels = (w: Widget) =>
    (w.properties.metrics as unknown[][]).map((m) => (m[m.length - 1] as { label?: string }).label).filter(Boolean);

  test("with a team's SES tenant, its status changes: both rules' matches, the alarm's line, the latest events", () => {
    const s = synthWithCallbacks();
    const counts = titled(s, "Teams: SES tenants' sending status");
    expect(labels(counts)).toEqual(['Disabled by SES', 'Enabled again']);
    expect(JSON.stringify(counts.properties.metrics)).toContain('"AWS/Events","TriggeredRules","RuleName"');
    expect(counts.properties.annotations.horizontal[0].label).toBe('sesTenantPaused (warn)');
    const latest = titled(s, "Teams: SES tenants' latest status changes");
    expect(latest.properties.query).toContain('`detail-type`');
    expect(latest.properties.query).toContain('resources.0');
    const none = widgets(synthesize(CALLBACK_PROPS)).map((w) => String(w.properties.title));
    expect(none.some((t) => t.includes('SES tenants'))).toBe(false);
  });

  test('its first row is single values, in order', () => {
    const [first, ...rest] = widgets(synthDefault());
    expect(first).toMatchObject({ type: 'metric', x: 0, y: 0, properties: { view: 'singleValue' } });
    expect(first.properties.metrics.filter((m: unknown[]) => (m[m.length - 1] as any).visible !== false)).toHaveLength(
      AT_A_GLANCE.length,
    );
    expect(labels(first).filter((l) => (AT_A_GLANCE as readonly string[]).includes(l!))).toEqual([...AT_A_GLANCE]);
    expect(rest.every((w) => w.y > 0)).toBe(true);
  });

  test('right under the first row, whether sending has stopped: mail waiting while the send function is not invoked', () => {
    const [, second] = widgets(synthDefault());
    expect(second).toMatchObject({ type: 'metric', properties: { view: 'singleValue' } });
    const body = JSON.stringify(second.properties.metrics);
    expect(body).toContain('IF(FILL(waiting, 0) + FILL(waitingHigh, 0) > 0 AND FILL(invocations, 0) == 0, 1, 0)');
    // Mail waiting in either lane: the work queue's and the high-priority queue's visible messages.
    expect(body.match(/"ApproximateNumberOfMessagesVisible"/g)).toHaveLength(2);
    expect(JSON.stringify(second.properties.metrics)).toContain('Invocations');
  });

  test('shows the alarms by severity', () => {
    const s = synthDefault();
    const status = widgets(s).filter((w) => w.type === 'alarm');
    expect(status.map((w) => w.properties.title)).toEqual(['Paging alarms', 'Warnings']);
    expect(status[0].properties.alarms).toHaveLength(
      EVERY_PIPELINE.filter((n) => EXPECTED[n].severity === 'page').length,
    );
    // With teams (and callbacks and a tenant), every team's backlog alarm is on the board: two teams here.
    const all = widgets(synthWithCallbacks()).filter((w) => w.type === 'alarm');
    const pagingWithTeams = ALARM_NAMES.filter((n) => EXPECTED[n].severity === 'page').length - 1 + 2;
    expect(all[0].properties.alarms).toHaveLength(pagingWithTeams);
  });

  test('reads top to bottom as the flow', () => {
    const sections = widgets(synthDefault())
      .filter((w) => w.type === 'text' && String(w.properties.markdown).startsWith('## '))
      .map((w) => String(w.properties.markdown).replace(/^## /, '').split(':')[0].split(' (')[0]);
    expect(sections).toEqual([
      '1. Publish',
      '2. Queue',
      '3. Function',
      '4. Idempotency store',
      '5. Outcomes',
      '5b. Brown-outs',
      '6. SES reputation',
      '7. Deliveries',
      '8. Ledger',
      '9. Status',
    ]);
  });

  test('graphs each stage with titled, labelled axes', () => {
    const graphs = widgets(synthDefault()).filter((w) => w.type === 'metric' && w.properties.view !== 'singleValue');
    expect(graphs.length).toBeGreaterThanOrEqual(20);
    for (const g of graphs) {
      expect(g.properties.title).toEqual(expect.any(String));
      expect(g.properties.yAxis.left.label).toEqual(expect.any(String));
    }
    const body = JSON.stringify(graphs);
    for (const name of [
      'NumberOfMessagesPublished',
      'NumberOfNotificationsFailed',
      'ApproximateNumberOfMessagesVisible',
      'ApproximateNumberOfMessagesDelayed',
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateAgeOfOldestMessage',
      'NumberOfMessagesSent',
      'Invocations',
      'Errors',
      'Throttles',
      'Duration',
      'ConcurrentExecutions',
      'SuccessfulRequestLatency',
    ]) {
      expect(body).toContain(`"${name}"`);
    }
  });

  test('the work queue depth counts delayed copies', () => {
    const w = titled(synthDefault(), 'Work queue depth (retries wait as delayed copies)');
    expect(JSON.stringify(w.properties.metrics)).toContain('"ApproximateNumberOfMessagesDelayed"');
    expect(w.properties.annotations.horizontal).toEqual([
      expect.objectContaining({ value: 14 * 1800, label: 'backlogTooLarge (page)' }),
    ]);
  });

  test("the first row's backlog counts both lanes: visible, delayed and in flight of each queue", () => {
    const [first] = widgets(synthDefault());
    const body = JSON.stringify(first.properties.metrics);
    for (const name of ['Visible', 'Delayed', 'NotVisible']) {
      expect(body.match(new RegExp(`"ApproximateNumberOfMessages${name}"`, 'g'))).toHaveLength(2);
    }
  });

  test("reputation graphs label the configuration set's rate and the account's apart", () => {
    const s = synthDefault();
    for (const [title, label] of [
      ['Bounce rate (%)', 'Bounce rate'],
      ['Complaint rate (%)', 'Complaint rate'],
    ] as const) {
      const w = titled(s, title);
      const shown = labels(w);
      expect(shown).toEqual(
        expect.arrayContaining([
          `${label} of the account`,
          expect.stringMatching(new RegExp(`^${label} of configuration set`)),
        ]),
      );
    }
  });

  test('bounce and complaint rates have their own graphs, each with its alarm levels in percent', () => {
    const s = synthDefault();
    const bounce = titled(s, 'Bounce rate (%)');
    const complaint = titled(s, 'Complaint rate (%)');
    expect(bounce.properties.annotations.horizontal.map((a: { value: number }) => a.value)).toEqual([2, 5]);
    expect(complaint.properties.annotations.horizontal.map((a: { value: number }) => a.value)).toEqual([0.05, 0.1]);
    expect(JSON.stringify(bounce.properties.metrics)).not.toContain('ComplaintRate');
    expect(JSON.stringify(complaint.properties.metrics)).not.toContain('BounceRate');
  });

  test('retry age shows both of its alarm levels', () => {
    const w = titled(synthDefault(), 'Age of retried messages');
    expect(w.properties.annotations.horizontal.map((a: { label: string }) => a.label)).toEqual([
      'retryingTooLong (warn)',
      'retriesStalled (page)',
    ]);
  });

  test("shows the ledger's health: lag, events recorded, duration, errors", () => {
    const s = synthDefault();
    const lag = titled(s, 'Ledger lag: oldest SES event in the buffer');
    expect(lag.properties.annotations.horizontal[0]).toMatchObject({ value: 900 });
    expect(JSON.stringify(titled(s, 'Events recorded vs emails sent').properties.metrics)).toContain(
      `"${LEDGER_METRICS.eventsRecorded}"`,
    );
    expect(JSON.stringify(titled(s, 'Ledger function duration').properties.metrics)).toContain('"Duration"');
    expect(JSON.stringify(titled(s, 'Ledger function: invocations, errors, throttles').properties.metrics)).toContain(
      '"Errors"',
    );
  });

  test('shows the status function', () => {
    const s = synthDefault();
    const fn = s.stack.resolve(s.stack.pipeline.ledger.statusFunction.functionName);
    const body = JSON.stringify(titled(s, 'Status lookups: invocations, errors, throttles').properties.metrics);
    expect(body).toContain('"Invocations"');
    expect(fn).toBeDefined();
  });

  test('counts rejects and rendering failures of the configuration set', () => {
    const body = JSON.stringify(
      titled(
        synthesize({ configurationSetName: 'transactional' }),
        'Accepted, then not delivered: rejected or not rendered',
      ).properties.metrics,
    );
    expect(body).toContain('["AWS/SES","Reject","ses:configuration-set","transactional"');
    expect(body).toContain('["AWS/SES","Rendering Failure","ses:configuration-set","transactional"');
  });

  test('shows every handler metric in its namespace with the service dimension', () => {
    const body = JSON.stringify(widgets(synthDefault()));
    for (const name of Object.values(HANDLER_METRICS)) {
      if (name === HANDLER_METRICS.permanentFailuresByReason) {
        // Has a second dimension (reason): shown through a SEARCH expression, a line per reason.
        expect(body).toContain(
          `SEARCH('{EmailPipeline,service,reason} MetricName=\\"${name}\\" service=\\"email-pipeline\\"', 'Sum', 300)`,
        );
      } else {
        expect(body).toContain(`["EmailPipeline","${name}","service","email-pipeline"`);
      }
    }
  });

  test('shows deliveries of this configuration set, confirmations and the ledger queues', () => {
    const body = JSON.stringify(widgets(synthesize({ configurationSetName: 'transactional' })));
    for (const name of ['Delivery', 'Bounce', 'Complaint']) {
      expect(body).toContain(`["AWS/SES","${name}","ses:configuration-set","transactional"`);
    }
    for (const name of Object.values(LEDGER_METRICS)) {
      expect(body).toContain(`["EmailPipeline","${name}","service","email-pipeline"`);
    }
    expect(body).toContain('Events in the ledger DLQ');
  });

  test('follows the configured namespace and service name', () => {
    const s = synthesize({ metricsNamespace: 'Mail/Prod', serviceName: 'mailer' });
    expect(JSON.stringify(widgets(s))).toContain('["Mail/Prod","EmailsSent","service","mailer"');
  });

  test('can be turned off', () => {
    const s = synthesize({}, undefined, { monitoring: { dashboard: false } });
    expect(Object.keys(s.template.findResources('AWS::CloudWatch::Dashboard'))).toHaveLength(0);
    expect(alarms(s).length).toBeGreaterThan(0);
  });
});

test('every metric-math alarm that combines series with MAX, MIN or SUM fills each series, so a missing one cannot silence it', () => {
  const s = synthDefault();
  const combining = alarms(s)
    .flatMap((a) => (a.Properties.Metrics ?? []) as Array<{ Expression?: string }>)
    .map((m) => m.Expression)
    .filter((e): e is string => typeof e === 'string' && /\b(MAX|MIN|SUM)\(\[/.test(e));
  expect(combining.length).toBeGreaterThan(0);
  for (const expression of combining) {
    const inside = /\[(.*)\]/.exec(expression)?.[1] ?? '';
    for (const item of inside.split(/,\s*(?![^()]*\))/))
      expect({ expression, item: item.trim() }).toEqual({ expression, item: expect.stringMatching(/^FILL\(/) });
  }
});

test('failed SNS deliveries alarm on both topics: the high-priority one delivers to a queue of its own', () => {
  const s = synthDefault();
  const topics = watchedMetrics(alarmNamed(s, 'snsDeliveryFailures'))
    .filter((m) => m.MetricName === 'NumberOfNotificationsFailed')
    .map((m) => JSON.stringify(m.Dimensions));
  expect(topics.sort()).toEqual(
    [s.ids.topic, s.ids.highPriorityTopic]
      .map((id) => JSON.stringify([{ Name: 'TopicName', Value: { 'Fn::GetAtt': [id, 'TopicName'] } }]))
      .sort(),
  );
});
