/** The saved CloudWatch Logs Insights queries: one per question an operator asks, over the pipeline's own log groups. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KEY_PLACEHOLDER } from '../../../../../lib/construct/monitoring/monitoring';
import { CALLBACK_PROPS, synthDefault, synthesize, Synthesized } from '../../../helpers';

describe('saved Logs Insights queries', () => {
  function queries(s: Synthesized): Array<{ Name: string; QueryString: string; LogGroupNames?: string[] }> {
    return Object.values(s.template.findResources('AWS::Logs::QueryDefinition')).map((q) => q.Properties);
  }
  const named = (s: Synthesized, part: string) => {
    const found = queries(s).filter((q) => q.Name.includes(part));
    expect(found).toHaveLength(1);
    return found[0];
  };

  test('there are four, in the pipeline folder', () => {
    const qs = queries(synthDefault());
    expect(qs).toHaveLength(4);
    for (const q of qs) expect(q.Name.startsWith('EmailPipeline-Monitoring/')).toBe(true);
  });

  test("one key's story reads the send, ledger and status log groups for the key placeholder", () => {
    const s = synthDefault();
    const q = named(s, "One key's story");
    const n = s.stack.pipeline.logGroupNames;
    expect(q.LogGroupNames).toEqual([n.send, n.ledger, n.status]);
    expect(q.QueryString).toContain(`dedupeKey = "${KEY_PLACEHOLDER}"`);
    expect(q.QueryString).toContain('sort @timestamp asc');
  });

  test("with callbacks, one key's story reads the callback function's log group too", () => {
    const s = synthesize(CALLBACK_PROPS);
    const q = named(s, "One key's story");
    const n = s.stack.pipeline.logGroupNames;
    expect(n.callbacks).toBeDefined();
    expect(q.LogGroupNames).toEqual([n.send, n.ledger, n.status, n.callbacks]);
    expect(q.Name).toContain('callbacks');
  });

  test('outcomes by reason count decisions by class and code', () => {
    const q = named(synthDefault(), 'Outcomes by decision and reason');
    expect(q.QueryString).toContain('stats count(*) as records by decision, errorClass, errorCode');
  });

  test("unconfirmed resends match the send function's WARN line", () => {
    const q = named(synthDefault(), 'Unconfirmed resends');
    expect(q.QueryString).toContain('filter message like "no SES event for an earlier attempt"');
    const confirm = fs.readFileSync(
      path.join(__dirname, '..', '..', '..', '..', '..', 'lambdas', 'send-email', 'confirm.ts'),
      'utf8',
    );
    expect(confirm).toContain("'no SES event for an earlier attempt");
  });

  test('slowest sends sort the send function invocations by duration', () => {
    const q = named(synthDefault(), 'Slowest send invocations');
    expect(q.QueryString).toContain('filter @type = "REPORT"');
    expect(q.QueryString).toContain('sort @duration desc');
  });

  describe('with teams', () => {
    let teams: Synthesized;
    beforeAll(() => {
      teams = synthesize({ teams: { billing: { senders: ['billing@example.com'] } } });
    });

    test('two more: outcomes by team over the ledger log group, dead letters by team over the send one', () => {
      expect(queries(teams)).toHaveLength(6);
      const n = teams.stack.pipeline.logGroupNames;
      const outcomes = named(teams, 'Outcomes by team');
      expect(outcomes.LogGroupNames).toEqual([n.ledger]);
      expect(outcomes.QueryString).toContain('stats count(*) as events by team, eventType');
      // The line the query counts is the ledger's, which names a team's team.
      const ledger = fs.readFileSync(
        path.join(__dirname, '..', '..', '..', '..', '..', 'lambdas', 'ledger', 'ledger.ts'),
        'utf8',
      );
      expect(outcomes.QueryString).toContain('filter message = "ledger event recorded" and ispresent(team)');
      expect(ledger).toContain("logger.info('ledger event recorded'");
      const letters = named(teams, 'Dead letters by team');
      expect(letters.LogGroupNames).toEqual([n.send]);
      expect(letters.QueryString).toContain('parse dedupeKey /^(?<team>[a-z][a-z0-9-]{0,31})#/');
      expect(letters.QueryString).toContain('stats count(*) as letters by team, errorCode');
    });

    test('the dashboard shows both as tables, and a dashboard without teams does not', () => {
      const body = (s: Synthesized) =>
        JSON.stringify(Object.values(s.template.findResources('AWS::CloudWatch::Dashboard')).map((d) => d.Properties));
      expect(body(teams)).toContain('Teams: SES outcomes (ledger events by team)');
      expect(body(teams)).toContain('Teams: dead letters by reason');
      expect(body(teams)).toContain('count(*) as events by team, eventType');
      expect(body(synthDefault())).not.toContain('Teams: ');
    });
  });
});
