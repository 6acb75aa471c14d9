import { PutConfigurationSetSendingOptionsCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { handler, type AlarmActionEvent } from '../../../../lambdas/reputation-pause/handler';

/** The event a CloudWatch alarm action gives a function, in the state given. */
const alarmEvent = (value: string): AlarmActionEvent => ({
  alarmData: {
    alarmName: 'Mail-Monitoring-page-SesBounceRate',
    state: { value, reason: 'Threshold Crossed: 1 datapoint [0.06] was greater than the threshold (0.05).' },
  },
});

describe('the reputation pause handler', () => {
  let send: jest.SpyInstance;
  let log: jest.SpyInstance;

  beforeEach(() => {
    process.env.CONFIGURATION_SET_NAME = 'mail-set';
    send = jest.spyOn(SESv2Client.prototype, 'send').mockImplementation(async () => ({}));
    log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  });

  afterEach(() => {
    jest.restoreAllMocks();
    delete process.env.CONFIGURATION_SET_NAME;
  });

  test('on ALARM, turns sending off for its configuration set, and logs it', async () => {
    await handler(alarmEvent('ALARM'));

    expect(send).toHaveBeenCalledTimes(1);
    const command = send.mock.calls[0][0] as PutConfigurationSetSendingOptionsCommand;
    expect(command).toBeInstanceOf(PutConfigurationSetSendingOptionsCommand);
    expect(command.input).toEqual({ ConfigurationSetName: 'mail-set', SendingEnabled: false });
    expect(JSON.parse(log.mock.calls[0][0] as string)).toMatchObject({
      level: 'WARN',
      configurationSet: 'mail-set',
      alarm: 'Mail-Monitoring-page-SesBounceRate',
    });
  });

  test.each(['OK', 'INSUFFICIENT_DATA'])('on %s, does nothing: it never resumes', async (state) => {
    await handler(alarmEvent(state));

    expect(send).not.toHaveBeenCalled();
  });

  test('an event that is not an alarm action pauses nothing', async () => {
    await handler(undefined);
    await handler({});

    expect(send).not.toHaveBeenCalled();
  });

  test('a failed SES call fails the invocation, so Lambda retries it', async () => {
    send.mockImplementation(async () => {
      throw new Error('ThrottlingException');
    });

    await expect(handler(alarmEvent('ALARM'))).rejects.toThrow('ThrottlingException');
  });

  test('without a configuration set to pause, it fails rather than calling SES', async () => {
    delete process.env.CONFIGURATION_SET_NAME;

    await expect(handler(alarmEvent('ALARM'))).rejects.toThrow('CONFIGURATION_SET_NAME');
    expect(send).not.toHaveBeenCalled();
  });
});
