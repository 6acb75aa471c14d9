/** The lanes of the rate (send/lane-rates.ts): each lane's rate, and the kind a lane counts as. */
import {
  kindOf,
  laneRates,
  siblingOf,
  teamHighLane,
  teamLane,
} from '../../../../../lambdas/send-email/send/lane-rates';

const RATE = 14 * 0.95;

test('95 % of maxSendRate, the high lane its share of it, the work queue the rest', () => {
  expect(laneRates(14, 20)).toEqual({ high: expect.closeTo(RATE * 0.2), normal: expect.closeTo(RATE * 0.8) });
  expect(laneRates(14, 0).high).toBe(0);
});

test("with teams: each team its share of the whole rate; the pipeline's own lanes what the shares leave", () => {
  const rates = laneRates(14, 20, { billing: 70, security: 30 });
  expect(rates['team:billing']).toBeCloseTo(RATE * 0.7);
  expect(rates['team:security']).toBeCloseTo(RATE * 0.3);
  expect(rates.high).toBe(0);
  expect(rates.normal).toBe(0);
  const some = laneRates(14, 20, { billing: 40 });
  expect(some.high).toBeCloseTo(RATE * 0.6 * 0.2);
  expect(some.normal).toBeCloseTo(RATE * 0.6 * 0.8);
  expect(Object.values(some).reduce((a, b) => a + b, 0)).toBeCloseTo(RATE);
});

test('a team that may send high-priority mail holds its reserve within its share: high:<name>', () => {
  const rates = laneRates(14, 20, { billing: 70, security: 30 }, ['security']);
  expect(rates['team:billing']).toBeCloseTo(RATE * 0.7);
  expect(rates['high:security']).toBeCloseTo(RATE * 0.3 * 0.2);
  expect(rates['team:security']).toBeCloseTo(RATE * 0.3 * 0.8);
  expect(rates['high:billing']).toBeUndefined();
  expect(Object.values(rates).reduce((a, b) => a + b, 0)).toBeCloseTo(RATE);
  // A team listed as high without a share has no lane.
  expect(laneRates(14, 20, { billing: 70 }, ['security'])['high:security']).toBeUndefined();
});

test("a team's lanes are team:<name> and high:<name>, each the other's sibling; the high lanes count as high", () => {
  expect(teamLane('billing')).toBe('team:billing');
  expect(teamHighLane('billing')).toBe('high:billing');
  expect(siblingOf('team:billing')).toBe('high:billing');
  expect(siblingOf('high:billing')).toBe('team:billing');
  expect(siblingOf('high')).toBe('normal');
  expect(siblingOf('normal')).toBe('high');
  expect(kindOf('high')).toBe('high');
  expect(kindOf('high:security')).toBe('high');
  expect(kindOf('normal')).toBe('normal');
  expect(kindOf(teamLane('billing'))).toBe('normal');
});
