import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { onAny, percent, reputationRate, sustained } from '../../../../../lib/construct/monitoring/alarm-declaration';

describe('evaluation shapes', () => {
  test('onAny: any occurrence in one 5-minute period, no data not breaching', () => {
    expect(onAny('warn')).toEqual({
      severity: 'warn',
      threshold: 0,
      unit: 'count',
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      periodSeconds: 300,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
      enabled: true,
    });
  });

  test('reputationRate pages on one 15-minute period and keeps its state without data', () => {
    expect(reputationRate(0.02)).toMatchObject({
      severity: 'page',
      threshold: 0.02,
      unit: 'fraction',
      evaluationPeriods: 1,
      periodSeconds: 900,
      treatMissingData: cw.TreatMissingData.IGNORE,
    });
  });

  test('sustained pages on three 5-minute periods running, its threshold fixed or from the settings', () => {
    const fromSettings = (s: { maxSendRate: number }) => s.maxSendRate * 2;

    expect(sustained(60, 'seconds')).toMatchObject({
      severity: 'page',
      threshold: 60,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
    });
    expect(sustained(fromSettings, 'count').threshold).toBe(fromSettings);
  });
});

test('percent writes a fraction as a percentage without float noise', () => {
  expect([percent(0.0005), percent(0.001), percent(0.02), percent(0.05)]).toEqual(['0.05 %', '0.1 %', '2 %', '5 %']);
  expect(percent(0.07)).toBe('7 %');
});
