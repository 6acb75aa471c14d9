/** The names the functions publish under and the dashboards and alarms read: none is used twice. */
import * as names from '../../../../lambdas/kernel/names';

test('no metric name is published for two meanings', () => {
  const metricMaps = [
    names.METRIC,
    names.LANE_METRIC,
    names.SCHEDULE_METRIC,
    names.CONFIRM_METRIC,
    names.LEDGER_METRIC,
  ].map((m) => Object.values(m) as string[]);
  const all = metricMaps.flat();
  expect(all.length).toBeGreaterThan(20);
  expect(all.filter((name, i) => all.indexOf(name) !== i)).toEqual([]);
});

test('metric names are CloudWatch-safe words', () => {
  const all = [
    names.METRIC,
    names.LANE_METRIC,
    names.SCHEDULE_METRIC,
    names.CONFIRM_METRIC,
    names.LEDGER_METRIC,
  ].flatMap((m) => Object.values(m) as string[]);
  expect(all.filter((name) => !/^[A-Z][A-Za-z]{2,254}$/.test(name))).toEqual([]);
});

test('decisions and lanes are each listed once', () => {
  expect(new Set(names.DECISIONS).size).toBe(names.DECISIONS.length);
  expect(new Set(names.LANES).size).toBe(names.LANES.length);
});

test('no two message attributes the pipeline writes share a name', () => {
  const attributes = [
    ...(Object.values(names.DLQ_ATTRIBUTE) as string[]),
    ...(Object.values(names.RETRY_ATTRIBUTE) as string[]),
    names.PRIORITY_ATTRIBUTE,
  ];
  expect(attributes.filter((name, i) => attributes.indexOf(name) !== i)).toEqual([]);
});
