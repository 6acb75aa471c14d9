/** The lanes of the rate (send/lane-rates.ts): each lane's rate, and the kind a lane counts as. */
import { kindOf, laneRates, teamLane } from '../../../../../lambdas/send-email/send/lane-rates';

const RATE = 14 * 0.95;

test('95 % of maxSendRate, the high lane its share of it, the work queue the rest', () => {
  expect(laneRates(14, 20)).toEqual({ high: expect.closeTo(RATE * 0.2), normal: expect.closeTo(RATE * 0.8) });
  expect(laneRates(14, 0).high).toBe(0);
});

test("with teams: high's share, then each team its share of the rest; the work queue keeps what they leave", () => {
  const rates = laneRates(14, 20, { billing: 70, security: 30 });
  expect(rates.high).toBeCloseTo(RATE * 0.2);
  expect(rates['team:billing']).toBeCloseTo(RATE * 0.8 * 0.7);
  expect(rates['team:security']).toBeCloseTo(RATE * 0.8 * 0.3);
  expect(rates.normal).toBe(0);
  const some = laneRates(14, 20, { billing: 40 });
  expect(some.normal).toBeCloseTo(RATE * 0.8 * 0.6);
  expect(Object.values(some).reduce((a, b) => a + b, 0)).toBeCloseTo(RATE);
});

test("a team's lane is team:<name>; every lane but high counts as normal", () => {
  expect(teamLane('billing')).toBe('team:billing');
  expect(kindOf('high')).toBe('high');
  expect(kindOf('normal')).toBe('normal');
  expect(kindOf(teamLane('billing'))).toBe('normal');
});
