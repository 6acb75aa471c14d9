/** SES events counted in CloudWatch: the configuration set's CloudWatch destination and its reputation metrics. */
import { synthDefault } from '../../../helpers';

describe('SES events counted in CloudWatch', () => {
  test('the CloudWatch destination counts rejects and rendering failures too', () => {
    const destinations = Object.values(
      synthDefault().template.findResources('AWS::SES::ConfigurationSetEventDestination'),
    ).map((d) => d.Properties.EventDestination);
    const cloudWatch = destinations.filter((d) => d.CloudWatchDestination !== undefined);
    expect(cloudWatch).toHaveLength(1);
    expect([...cloudWatch[0].MatchingEventTypes].sort()).toEqual(
      ['bounce', 'complaint', 'delivery', 'reject', 'renderingFailure'].sort(),
    );
    expect(cloudWatch[0].CloudWatchDestination.DimensionConfigurations).toEqual([
      { DimensionName: 'ses:configuration-set', DimensionValueSource: 'messageTag', DefaultDimensionValue: 'none' },
    ]);
  });

  test('the owned configuration set publishes its reputation metrics', () => {
    synthDefault().template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      ReputationOptions: { ReputationMetricsEnabled: true },
    });
  });
});
