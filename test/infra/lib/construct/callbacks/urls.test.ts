/**
 * The synth-time rule for callback URLs on AWS: `https://` only, and no localhost or IP literal
 * outside the public address space (IPv4 and IPv6); each refusal names its field.
 */
import { SettingsError } from '../../../../../lib/settings';
import { awsCallbackUrlProblem, isNonPublicAddress } from '../../../../../lib/construct/callbacks/urls';
import { synthesize } from '../../../helpers';

const team = (callbackUrl: string) => ({
  teams: { billing: { senders: ['billing@example.com'], callbackUrl } },
});

/** The SettingsError a synth throws, or undefined. */
function refusal(build: () => unknown): SettingsError | undefined {
  try {
    build();
    return undefined;
  } catch (error) {
    if (error instanceof SettingsError) return error;
    throw error;
  }
}

describe.each([
  ['http://hooks.example.com/', /https:\/\//],
  ['https://localhost/', /localhost/],
  ['https://api.localhost:8443/x', /localhost/],
  ['https://10.0.0.1/', /private/],
  ['https://[::1]/', /private, loopback/],
  ['https://169.254.169.254/latest/meta-data/', /link-local/],
  ['https://100.64.1.2/', /CGNAT/],
  ['https://0.0.0.0/', /unspecified/],
  ['https://127.0.0.1:9000/', /loopback/],
  ['https://192.168.1.10/', /private/],
  ['https://172.31.255.255/', /private/],
  ['https://[fd00::1]/', /private/],
  ['https://[fe80::1]/', /link-local/],
  ['https://[::]/', /unspecified/],
  ['https://[::ffff:10.0.0.1]/', /private/],
  ['https://2130706433/', /loopback/], // 127.0.0.1 written as one number: URL normalises it
])('%s is refused at synth', (url, why) => {
  test('as a team’s callbackUrl, naming teams.billing.callbackUrl', () => {
    const error = refusal(() => synthesize(team(url)));
    expect(error?.setting).toBe('teams.billing.callbackUrl');
    expect(error?.message).toMatch(why);
  });

  test('as the pipeline’s callbackUrl, naming callbackUrl', () => {
    expect(refusal(() => synthesize({ callbackUrl: url }))?.setting).toBe('callbackUrl');
  });
});

test.each(['https://hooks.example.com/', 'https://93.184.216.34/email', 'https://[2606:4700::1111]/h'])(
  '%s is accepted',
  (url) => {
    expect(awsCallbackUrlProblem(url)).toBeUndefined();
    expect(synthesize(team(url)).stack.pipeline.callbacks?.signingSecret('billing')).toBeDefined();
  },
);

test('public addresses are public, the edges of the blocked ranges are not', () => {
  for (const address of ['8.8.8.8', '100.63.255.255', '100.128.0.0', '172.32.0.0', '2001:4860:4860::8888']) {
    expect(isNonPublicAddress(address)).toBe(false);
  }
  for (const address of ['100.64.0.0', '100.127.255.255', '172.16.0.0', 'fc00::', 'febf::1']) {
    expect(isNonPublicAddress(address)).toBe(true);
  }
  expect(isNonPublicAddress('hooks.example.com')).toBe(false);
});
