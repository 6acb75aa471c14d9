/**
 * Status and cancel per team by IAM, in the template: for a team listing status readers or
 * cancellers, an alias `team-<name>` of the status function (and of the cancel function, with
 * cancellers) with a function URL of its own, invokable by those principals only; the Endpoints'
 * Teams name the team's URLs; a team listing nobody gets none.
 */
import { synthesize } from '../../../helpers';

const READER = 'arn:aws:iam::111122223333:role/billing-support';
const CANCELER = 'arn:aws:iam::111122223333:role/billing-ops';
const TEAMS = {
  billing: { senders: ['billing@example.com'], statusReaders: [READER], cancelers: [CANCELER] },
  security: { senders: ['security@example.com'] },
};

const { template, stack } = synthesize({ teams: TEAMS });
const text = (value: unknown): string => JSON.stringify(value);
const ledger = stack.pipeline.ledger;
const idOf = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never);

/** The logical id of `fn`'s alias `team-billing`. */
function aliasOf(fn: unknown): string | undefined {
  return Object.entries(template.findResources('AWS::Lambda::Alias')).find(
    ([, a]) => a.Properties.Name === 'team-billing' && a.Properties.FunctionName?.Ref === idOf(fn as never),
  )?.[0];
}

test('billing gets an alias with a URL of its own on both functions; security, listing nobody, none', () => {
  const aliases = Object.values(template.findResources('AWS::Lambda::Alias'));
  expect(aliases.map((a) => a.Properties.Name)).toEqual(['team-billing', 'team-billing']);
  expect(aliasOf(ledger.statusFunction)).toBeDefined();
  expect(aliasOf(ledger.cancelFunction)).toBeDefined();
  const urls = Object.values(template.findResources('AWS::Lambda::Url')).filter(
    (u) => u.Properties.Qualifier === 'team-billing',
  );
  expect(urls).toHaveLength(2);
  expect(urls.every((u) => u.Properties.AuthType === 'AWS_IAM')).toBe(true);
  expect(ledger.teamUrls.security).toBeUndefined();
});

test("the team's URLs are invokable by its principals only: readers the status alias, cancellers both", () => {
  const permissions = Object.values(template.findResources('AWS::Lambda::Permission')).filter(
    (p) => p.Properties.Action === 'lambda:InvokeFunctionUrl',
  );
  const on = (principal: string) =>
    permissions.filter((p) => p.Properties.Principal === principal).map((p) => p.Properties.FunctionName?.Ref);
  const [status, cancel] = [aliasOf(ledger.statusFunction), aliasOf(ledger.cancelFunction)];
  expect(on(READER)).toEqual([status]);
  expect(on(CANCELER).sort()).toEqual([status, cancel].sort());
});

test("the Endpoints' Teams name billing's own URLs, each ending in deliveries/", () => {
  const endpoints = Object.entries(template.toJSON().Outputs as Record<string, { Value: unknown }>).find(([id]) =>
    id.includes('Endpoints'),
  )?.[1];
  const value = text(endpoints?.Value);
  // The pipeline's own URLs, and billing's: its aliases' function URLs.
  expect(value.split('StatusUrl').length - 1).toBe(2);
  expect(value.split('CancelUrl').length - 1).toBe(2);
  expect(value).toContain('AliasteambillingFunctionUrl');
});
