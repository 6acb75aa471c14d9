/**
 * The alarms that page by default (the paging topic): reputation, mail stalled, resends the ledger
 * could not confirm, a stalled or silent ledger. Each is declared once here; alarm-catalog.ts
 * gathers them. `npm run docs:alarms` writes each one's row of the alarm table and `#### Alarm:
 * <name>` runbook heading in docs/operators.md; the runbook's prose is written by hand.
 */
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { onAny, percent, reputationOf, reputationRate, sustained, type AlarmDeclaration } from './alarm-declaration';
import {
  HANDLER_METRICS,
  LEDGER_METRICS,
  OPERATOR_DEAD_LETTER_CODES,
  arrivals,
  backlog,
  functionThrottles,
  handlerMetric,
  operatorDeadLetters,
  reputationMetric,
  silentLedger,
} from './metrics';

const REPUTATION_SET_AND_ACCOUNT = 'max of set and account';

export const PAGING_ALARMS = {
  // --- reputation ---
  sesComplaintRateWarning: {
    ...reputationRate(0.0005),
    watches: `\`Reputation.ComplaintRate\`, ${REPUTATION_SET_AND_ACCOUNT}`,
    summary: "complaints at the warning level, well before SES's review at 0.1 %",
    metric: (p, period) => reputationMetric(p, 'ComplaintRate', { period }),
    description: (p, t) =>
      `Complaint rate of the ${reputationOf(p)} above ${percent(t.threshold)}: SES reviews at 0.1 % and may pause at 0.5 %; Gmail wants under 0.1 %. Find what changed in who is mailed.`,
  },
  sesComplaintRate: {
    ...reputationRate(0.001),
    watches: `\`Reputation.ComplaintRate\`, ${REPUTATION_SET_AND_ACCOUNT}`,
    summary: "complaints at SES's review level (it may pause the account at 0.5 %)",
    metric: (p, period) => reputationMetric(p, 'ComplaintRate', { period }),
    description: (p, t) =>
      `Complaint rate of the ${reputationOf(p)} above ${percent(t.threshold)} (SES's review level; it may pause the account at 0.5 %). Stop the mailing that causes it.`,
  },
  sesBounceRateWarning: {
    ...reputationRate(0.02),
    watches: `\`Reputation.BounceRate\`, ${REPUTATION_SET_AND_ACCOUNT}`,
    summary: "bounces at the warning level, before SES's review at 5 %",
    metric: (p, period) => reputationMetric(p, 'BounceRate', { period }),
    description: (p, t) =>
      `Bounce rate of the ${reputationOf(p)} above ${percent(t.threshold)}: SES reviews at 5 % and may pause at 10 %. Find the list with bad addresses.`,
  },
  sesBounceRate: {
    ...reputationRate(0.05),
    watches: `\`Reputation.BounceRate\`, ${REPUTATION_SET_AND_ACCOUNT}`,
    summary: "bounces at SES's review level (it may pause the account at 10 %)",
    metric: (p, period) => reputationMetric(p, 'BounceRate', { period }),
    description: (p, t) =>
      `Bounce rate of the ${reputationOf(p)} above ${percent(t.threshold)} (SES's review level; it may pause the account at 10 %). Stop the mailing that causes it.`,
  },

  // --- mail stalled ---
  retriesStalled: {
    ...sustained(3600, 'seconds'),
    watches: '`RetryAgeSeconds` (max)',
    summary: 'retried mail has waited an hour: SES or the store is out, or sending is held back',
    metric: (p, period) => handlerMetric(p, HANDLER_METRICS.retryAge, { period, statistic: cw.Stats.MAXIMUM }),
    description: (p, t) =>
      `Retried emails have been waiting more than ${t.threshold} s since they reached the queue, for ${t.datapointsToAlarm} periods running: SES or the idempotency store is out, or sending is held back. Nothing is lost before RetryBudgetExhausted (${p.settings.retryBudgetSeconds} s).`,
  },
  backlogTooLarge: {
    ...sustained((settings) => settings.maxSendRate * 1800, 'count'),
    watches: "both lanes' queues: visible + delayed + in flight",
    thresholdText: '`maxSendRate` × 1800',
    summary: 'more than half an hour of sending at `maxSendRate` waits in the queues',
    metric: (p, period) => backlog([p.queue, p.highPriorityQueue], { period }),
    description: (p, t) =>
      `More than ${t.threshold} email requests wait in the work and high-priority queues (visible + delayed copies + in flight), over ${Math.round(t.threshold / p.settings.maxSendRate / 60)} minutes of sending at maxSendRate ${p.settings.maxSendRate}/s.`,
  },
  teamBacklogTooLarge: {
    ...sustained((settings) => settings.maxSendRate * 1800, 'count'),
    requires: 'teams',
    perTeam: true,
    watches: "each team's queue: visible + delayed + in flight (an alarm per team)",
    thresholdText: '`maxSendRate` × 1800',
    summary: "more than half an hour of sending at `maxSendRate` waits in one team's queue",
    metric: (p, period, team) => backlog(team === undefined ? [] : [p.teamQueues[team]!], { period }),
    description: (p, t, team) =>
      `More than ${t.threshold} email requests of team ${team} wait in its queue (visible + delayed copies + in flight), over ${Math.round(t.threshold / p.settings.maxSendRate / 60)} minutes of sending at maxSendRate ${p.settings.maxSendRate}/s: the team sends more than its share lets through, or its event source mapping is disabled.`,
  },
  systemicFailures: {
    ...onAny('page'),
    watches: '`SystemicFailures`',
    summary: 'the account cannot send (paused, suspended, daily quota), or this configuration set is paused',
    metric: (p, period) => handlerMetric(p, HANDLER_METRICS.systemicFailures, { period }),
    description: () =>
      'SES refuses to send for the account or this configuration set (paused, suspended, daily quota). Messages wait as delayed copies within the retry budget; check the SES account and the configuration set.',
  },
  functionThrottles: {
    ...onAny('page'),
    evaluationPeriods: 5,
    datapointsToAlarm: 5,
    periodSeconds: 60,
    watches: '`Throttles` of send + ledger + status',
    summary: 'a function was throttled for five minutes running: the concurrency is used up',
    metric: (p, period) => functionThrottles(p, period),
    description: (_p, t) =>
      `The send, ledger or status function was throttled in ${t.datapointsToAlarm} periods running: account or reserved concurrency is used up.`,
  },
  operatorDeadLetters: {
    ...onAny('page'),
    watches: '`PermanentFailuresByReason`, operator codes',
    summary: 'dead letters only the operator can fix: fix the cause, then redrive',
    metric: (p, period) => operatorDeadLetters(p, period),
    description: () =>
      `Dead letters only the operator can fix (${OPERATOR_DEAD_LETTER_CODES.join(', ')}): fix the identity, template, sandbox or outage, then redrive those codes.`,
  },
  subscriptionDeadLetters: {
    ...onAny('page'),
    watches: "`NumberOfMessagesSent`, subscription's DLQ",
    summary: 'SNS gave up delivering email requests to the work queue: they never reached the pipeline',
    metric: (p, period) => arrivals(p.subscriptionDeadLetterQueue, { period }),
    description: () =>
      "SNS gave up delivering email requests to the work queue: they are in the subscription's DLQ and were never sent. Check the queue policy and the queue key.",
  },

  // --- duplicates and the ledger ---
  unconfirmedResends: {
    ...onAny('page'),
    watches: '`UnconfirmedResends`',
    summary: 'a send of unknown fate got no SES event within the grace and was sent again: maybe two copies',
    metric: (p, period) => handlerMetric(p, LEDGER_METRICS.unconfirmedResends, { period }),
    description: () =>
      'Sends of unknown fate got no SES event within the grace and were sent again: those recipients may have two copies. Keys are logged at WARN; check the event destination and the ledger.',
  },
  ledgerStalled: {
    ...sustained(900, 'seconds'),
    watches: 'ledger buffer `ApproximateAgeOfOldestMessage`',
    summary: "SES events wait in the ledger's buffer: statuses lag, unknown-fate sends cannot be confirmed",
    metric: (p, period) =>
      p.ledger.bufferQueue.metricApproximateAgeOfOldestMessage({ period, statistic: cw.Stats.MAXIMUM }),
    description: (_p, t) =>
      `SES events have waited more than ${t.threshold} s in the ledger buffer: statuses lag and unknown-fate sends will be resent after the grace. Check the ledger function.`,
  },
  ledgerSilent: {
    ...onAny('page'),
    evaluationPeriods: 2,
    datapointsToAlarm: 2,
    periodSeconds: 900,
    watches: '`EmailsSent` while `LedgerEventsRecorded` = 0',
    summary: 'emails were sent but the ledger recorded no SES event: the event path is broken',
    metric: (p, period) => silentLedger(p, period),
    description: (_p, t) =>
      `Emails were sent but the ledger recorded no SES event in ${t.datapointsToAlarm} windows of ${t.periodSeconds} s: the event destination, the events rule, the buffer or the ledger function is broken.`,
  },
} satisfies Record<string, AlarmDeclaration>;
