/** The dashboard's callbacks row: only with callbacks; the function's metrics, the queue's age and the DLQ's depth. */
import { CALLBACK_METRIC } from '../../../../../lambdas/kernel/callbacks/names';
import { CALLBACK_PROPS, flattenJoin, synthDefault, synthesize, type Synthesized } from '../../../helpers';

type Widget = { type: string; properties: Record<string, any> };

function widgets(s: Synthesized): Widget[] {
  const dashboards = Object.values(s.template.findResources('AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  return JSON.parse(flattenJoin(dashboards[0]!.Properties.DashboardBody)).widgets as Widget[];
}

test('no callbacks row without callbacks', () => {
  const body = JSON.stringify(widgets(synthDefault()));
  expect(body).not.toContain('Callbacks');
  for (const metric of Object.values(CALLBACK_METRIC)) expect(body).not.toContain(metric);
});

describe('with callbacks', () => {
  let all: Widget[];
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize(CALLBACK_PROPS);
    all = widgets(s);
  });
  const titled = (title: string) => {
    const found = all.filter((w) => w.properties.title === title);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  test('its own section, last', () => {
    const sections = all.filter((w) => w.type === 'text' && String(w.properties.markdown).startsWith('## '));
    expect(sections.at(-1)?.properties.markdown).toMatch(/^## 10\. Callbacks/);
  });

  test('delivered, retries and failed, as the function publishes them (namespace and service)', () => {
    const metrics = titled('Callbacks delivered, retried, failed').properties.metrics as unknown[][];
    const { metricsNamespace } = s.stack.pipeline.settings;
    for (const name of [CALLBACK_METRIC.delivered, CALLBACK_METRIC.retried, CALLBACK_METRIC.failed]) {
      expect(metrics).toContainEqual([
        metricsNamespace,
        name,
        'service',
        s.stack.pipeline.serviceName,
        expect.objectContaining({ stat: 'Sum' }),
      ]);
    }
  });

  test('the age of the oldest waiting status change, and the DLQ’s depth, with their alarms’ thresholds', () => {
    const age = titled('Callbacks queue: oldest status change waiting');
    expect(JSON.stringify(age.properties.metrics)).toContain('ApproximateAgeOfOldestMessage');
    expect(age.properties.annotations.horizontal).toEqual([
      expect.objectContaining({ value: 3600, label: 'callbacksLate (warn)' }),
    ]);
    const dlq = titled('Callbacks DLQ depth');
    expect(JSON.stringify(dlq.properties.metrics)).toContain('ApproximateNumberOfMessagesVisible');
    expect(dlq.properties.annotations.horizontal).toEqual([
      expect.objectContaining({ value: 0, label: 'callbackDeadLetters (warn)' }),
    ]);
  });
});
