/** The team-share benchmark's reading of npm start's output: the key of each SENT line, nothing else. */
import { ISSUE_TEAMS, sentKey } from '../../../../../tools/dev/bench/team-share';

test("a SENT line's key is read; a line of another decision, or none, has none", () => {
  expect(
    sentKey('10:58:01 team-security-3 SENT                 key=security#s-abc-4 to=security4@share.example.com'),
  ).toBe('security#s-abc-4');
  expect(sentKey('10:58:01 pod-1  DUPLICATE SUPPRESSED key=billing#b-abc-1')).toBeUndefined();
  expect(sentKey('10:58:01 pod-1  RETRY                key=billing#b-abc-1')).toBeUndefined();
  expect(sentKey('Local email pipeline ready in 20.1 s')).toBeUndefined();
});

test("the issue's teams: billing and security at 50 % each, security with high priority and a tenant", () => {
  expect(ISSUE_TEAMS.billing.rateSharePercent + ISSUE_TEAMS.security.rateSharePercent).toBe(100);
  expect(ISSUE_TEAMS.security).toMatchObject({ highPriority: true, sesTenant: true });
});
