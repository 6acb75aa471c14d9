/**
 * Which pipeline a command talks to: a stack's pipelines as their outputs describe them (one JSON
 * object each, monitoring merged in), chosen by --pipeline (path or last part) or alone in the
 * stack; a stack's flat outputs; the flags and the environment variables; and what is said when
 * nothing is found, inside this repository and outside it. CloudFormation is a stand-in answering
 * DescribeStacks as the real one does: no network.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { OperationError, UsageError } from '../../../../lib/cli/errors';
import {
  describedPipelines,
  inThisRepository,
  noTargetMessage,
  output,
  resolveTarget,
  selectPipeline,
  targetOptions,
  type StackOutput,
} from '../../../../lib/cli/target';
import { tempDir } from '../../helpers';

/** One pipeline's output as the construct writes it: a compact JSON object. */
function pipelineOutput(at: string, extra: Record<string, unknown> = {}): StackOutput {
  const name = at.replace(/\W/g, '');
  return {
    OutputKey: `${name}EmailPipeline1A2B3C4D`,
    OutputValue: JSON.stringify({
      emailPipeline: at,
      v: 1,
      TopicArn: `arn:aws:sns:eu-west-1:111122223333:${name}-topic`,
      QueueUrl: `https://sqs.eu-west-1.amazonaws.com/111122223333/${name}-queue`,
      DeadLetterQueueUrl: `https://sqs.eu-west-1.amazonaws.com/111122223333/${name}-dlq`,
      FunctionName: `${name}-send`,
      ...extra,
    }),
  };
}

function monitoringOutput(at: string): StackOutput {
  return {
    OutputKey: `${at.replace(/\W/g, '')}MonitoringOutput`,
    OutputValue: JSON.stringify({
      emailPipelineMonitoring: at,
      v: 1,
      AlarmTopicArn: `arn:aws:sns:eu-west-1:111122223333:${at}-alarms`,
      WarningTopicArn: `arn:aws:sns:eu-west-1:111122223333:${at}-warnings`,
      AlarmNamePrefix: `${at}-`,
      // Never overrides the pipeline's own.
      TopicArn: 'not-this-one',
    }),
  };
}

const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('no error');
};

describe('a stack that describes its pipelines', () => {
  test('its Teams and Callbacks objects are kept as the JSON they came as (team-option.ts and callbacks.ts read them)', () => {
    const callbacks = { QueueUrl: 'q', DeadLetterQueueUrl: 'd', TableName: 't', SigningSecretArn: 'arn:s' };
    const teams = { billing: { TopicArn: 'arn:b', CallbackSigningSecretArn: 'arn:bs' } };
    const { outputs } = selectPipeline(
      'MailStack',
      [pipelineOutput('Mail', { Callbacks: callbacks, Teams: teams })],
      undefined,
    );
    expect(JSON.parse(outputs.Callbacks ?? '')).toEqual(callbacks);
    expect(JSON.parse(outputs.Teams ?? '')).toEqual(teams);
  });

  test('the only pipeline needs no name; its monitoring is merged in; other outputs are left alone', () => {
    const outputs = [
      { OutputKey: 'Unrelated', OutputValue: 'https://example.com' },
      { OutputKey: 'SomeJson', OutputValue: '{"other":"thing"}' },
      { OutputKey: 'Broken', OutputValue: '{"emailPipeline": ' },
      pipelineOutput('Mail', { MaxScheduleAheadSeconds: 172800, Encrypted: true, Nested: { no: 1 } }),
      monitoringOutput('Mail'),
      monitoringOutput('Gone'),
    ];
    const selected = selectPipeline('MailStack', outputs, undefined);
    expect(selected.path).toBe('Mail');
    expect(selected.outputs).toEqual({
      TopicArn: 'arn:aws:sns:eu-west-1:111122223333:Mail-topic',
      QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/Mail-queue',
      DeadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/Mail-dlq',
      FunctionName: 'Mail-send',
      MaxScheduleAheadSeconds: '172800',
      Encrypted: 'true',
      AlarmTopicArn: 'arn:aws:sns:eu-west-1:111122223333:Mail-alarms',
      WarningTopicArn: 'arn:aws:sns:eu-west-1:111122223333:Mail-warnings',
      AlarmNamePrefix: 'Mail-',
    });
    expect(selected.outputs.TopicArn).not.toBe('not-this-one');
  });

  const two = [pipelineOutput('Mail/Marketing'), pipelineOutput('Mail/Billing'), monitoringOutput('Mail/Billing')];

  test('several: a name is needed, and the error lists them (sorted) and says how to give it', () => {
    expect(message(() => selectPipeline('MailStack', two, undefined))).toBe(
      'Stack MailStack holds 2 email pipelines: Mail/Billing, Mail/Marketing. Say which with --pipeline NAME ' +
        "(or EMAIL_PIPELINE_NAME): its path or the path's last part.",
    );
    expect(() => selectPipeline('MailStack', two, undefined)).toThrow(OperationError);
  });

  test('--pipeline matches the whole path or its last part, case-sensitively', () => {
    expect(selectPipeline('MailStack', two, 'Mail/Billing').outputs.AlarmTopicArn).toContain('Mail/Billing-alarms');
    expect(selectPipeline('MailStack', two, 'Billing').path).toBe('Mail/Billing');
    expect(selectPipeline('MailStack', two, 'Marketing').outputs.FunctionName).toBe('MailMarketing-send');
    expect(message(() => selectPipeline('MailStack', two, 'billing'))).toBe(
      'Stack MailStack holds no pipeline "billing" (did you mean Billing?); it holds: Mail/Billing, Mail/Marketing.',
    );
    expect(message(() => selectPipeline('MailStack', two, 'Payroll'))).toBe(
      'Stack MailStack holds no pipeline "Payroll"; it holds: Mail/Billing, Mail/Marketing.',
    );
    expect(message(() => selectPipeline('MailStack', two, 'Mail'))).toContain('holds no pipeline "Mail"');
  });

  test('a last part two pipelines share is ambiguous: the whole path picks one', () => {
    const twins = [pipelineOutput('Eu/Billing'), pipelineOutput('Us/Billing')];
    expect(message(() => selectPipeline('Platform', twins, 'Billing'))).toBe(
      '"Billing" names 2 pipelines of stack Platform: Eu/Billing, Us/Billing. Give the whole path, e.g. --pipeline Eu/Billing.',
    );
    expect(selectPipeline('Platform', twins, 'Us/Billing').outputs.FunctionName).toBe('UsBilling-send');
  });

  test('described pipelines win over flat outputs beside them (the repository stack has both)', () => {
    const outputs = [
      { OutputKey: 'TopicArn', OutputValue: 'arn:aws:sns:eu-west-1:111122223333:flat' },
      pipelineOutput('EmailPipeline'),
    ];
    expect(selectPipeline('EmailPipelineStack', outputs, undefined)).toMatchObject({
      path: 'EmailPipeline',
      outputs: { TopicArn: 'arn:aws:sns:eu-west-1:111122223333:EmailPipeline-topic' },
    });
  });

  test('a newer version of the outputs, or the same pipeline twice, is said plainly', () => {
    expect(message(() => selectPipeline('S', [pipelineOutput('Mail', { v: 2 })], undefined))).toContain(
      'describes pipeline Mail in version 2 of its outputs; this CLI reads version 1',
    );
    expect(message(() => describedPipelines('S', [pipelineOutput('Mail'), pipelineOutput('Mail')]))).toBe(
      'Stack S has two outputs describing pipeline Mail: deploy it again.',
    );
  });
});

describe('a stack without described pipelines', () => {
  const flat = [
    { OutputKey: 'TopicArn', OutputValue: 'arn:aws:sns:eu-west-1:111122223333:t' },
    { OutputKey: 'DeadLetterQueueUrl', OutputValue: 'https://sqs/dlq' },
    { OutputKey: 'Empty' },
  ];

  test('flat outputs are its one pipeline', () => {
    expect(selectPipeline('EmailPipeline', flat, undefined)).toEqual({
      outputs: { TopicArn: 'arn:aws:sns:eu-west-1:111122223333:t', DeadLetterQueueUrl: 'https://sqs/dlq' },
    });
    expect(message(() => selectPipeline('EmailPipeline', flat, 'Billing'))).toContain(
      'Stack EmailPipeline has the outputs of one pipeline that names itself nowhere',
    );
  });

  test('no pipeline at all: the error names the stack, and does not guess', () => {
    const text = message(() => selectPipeline('WebStack', [{ OutputKey: 'Url', OutputValue: 'https://x' }], undefined));
    expect(text).toContain('Stack WebStack holds no email pipeline: none of its 1 output(s) describes one.');
    expect(text).not.toContain('is it an email pipeline stack?');
  });
});

describe('resolveTarget against a stand-in for CloudFormation', () => {
  function cloudFormation(outputs: StackOutput[] | Error) {
    const asked: string[] = [];
    return {
      asked,
      client: {
        send: async (command: DescribeStacksCommand) => {
          asked.push(command.input.StackName ?? '');
          if (outputs instanceof Error) throw outputs;
          return { Stacks: [{ StackName: command.input.StackName, Outputs: outputs }] };
        },
      } as never,
    };
  }

  test('a named pipeline of a stack: its outputs, its name in what is said, the flags that name it again', async () => {
    const cf = cloudFormation([pipelineOutput('Mail/Billing'), pipelineOutput('Mail/Marketing')]);
    const target = await resolveTarget(
      { stack: 'MailStack', pipeline: 'Billing', region: 'eu-west-1' },
      { cloudFormation: cf.client },
    );
    expect(cf.asked).toEqual(['MailStack']);
    expect(target).toMatchObject({
      description: 'pipeline Mail/Billing of stack MailStack',
      local: false,
      stack: 'MailStack',
      pipeline: 'Mail/Billing',
      flags: ' --stack MailStack --pipeline Mail/Billing --region eu-west-1',
      clients: { sqs: { region: 'eu-west-1' } },
    });
    expect(output(target, 'TopicArn')).toBe('arn:aws:sns:eu-west-1:111122223333:MailBilling-topic');
    expect(message(() => output(target, 'StatusUrl'))).toBe(
      'pipeline Mail/Billing of stack MailStack has no StatusUrl output: it was deployed with an older version of ' +
        'exactly-once-email, or without the feature that needs it. Deploy it again with this version.',
    );
  });

  test('several pipelines and none named: exit 1 listing them', async () => {
    const cf = cloudFormation([pipelineOutput('Billing'), pipelineOutput('Marketing')]);
    await expect(resolveTarget({ stack: 'MailStack' }, { cloudFormation: cf.client })).rejects.toThrow(
      'Stack MailStack holds 2 email pipelines: Billing, Marketing.',
    );
  });

  test("CloudFormation's own error keeps its advice", async () => {
    const gone = Object.assign(new Error('Stack with id Nope does not exist'), { name: 'ValidationError' });
    await expect(resolveTarget({ stack: 'Nope' }, { cloudFormation: cloudFormation(gone).client })).rejects.toThrow(
      'Could not read the outputs of stack Nope: ValidationError: Stack with id Nope does not exist. Check the stack name (--stack) and the region',
    );
  });
});

describe('the flags, else EMAIL_PIPELINE_STACK and EMAIL_PIPELINE_NAME', () => {
  const env = { EMAIL_PIPELINE_STACK: 'EnvStack', EMAIL_PIPELINE_NAME: 'EnvPipeline' };

  test('the variables name the target; the flags win', () => {
    expect(targetOptions({}, 'usage', env)).toEqual({ stack: 'EnvStack', pipeline: 'EnvPipeline' });
    expect(targetOptions({ stack: 'Flag' }, 'usage', env)).toEqual({ stack: 'Flag', pipeline: 'EnvPipeline' });
    expect(targetOptions({ stack: 'Flag', pipeline: 'P', region: 'r' }, 'usage', env)).toEqual({
      stack: 'Flag',
      pipeline: 'P',
      region: 'r',
    });
    expect(targetOptions({}, 'usage', {})).toEqual({});
    expect(targetOptions({}, 'usage', { EMAIL_PIPELINE_STACK: '' })).toEqual({});
  });

  test('a pipeline without a stack is a usage error', () => {
    expect(() => targetOptions({ pipeline: 'Billing' }, 'usage', {})).toThrow(UsageError);
    expect(message(() => targetOptions({}, 'usage', { EMAIL_PIPELINE_NAME: 'Billing' }))).toBe(
      'EMAIL_PIPELINE_NAME (set to Billing) picks a pipeline of a deployed stack: name the stack too, with --stack NAME or EMAIL_PIPELINE_STACK',
    );
  });
});

describe('no stack named and no local pipeline', () => {
  const dir = tempDir('cli-target-');

  test('this repository is told by its package.json; a user app or no package.json is not it', () => {
    expect(inThisRepository(path.join(__dirname, '..', '..', '..', '..'))).toBe(true);
    expect(inThisRepository(__dirname)).toBe(true);
    const app = path.join(dir(), 'my-app');
    mkdirSync(path.join(app, 'src'), { recursive: true });
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'my-app' }));
    expect(inThisRepository(path.join(app, 'src'))).toBe(false);
    expect(inThisRepository(dir())).toBe(false);
  });

  test('outside the repository, npm start is not advised; --stack and the variable are', () => {
    const outside = noTargetMessage('/app/.local/outputs.json', false);
    expect(outside).not.toContain('npm start');
    expect(outside).toContain('pass --stack NAME (or set EMAIL_PIPELINE_STACK) for a deployed stack');
    expect(outside).toContain('--pipeline NAME (or EMAIL_PIPELINE_NAME)');
    const inside = noTargetMessage('/repo/.local/outputs.json', true);
    expect(inside).toBe(
      'No local pipeline found (/repo/.local/outputs.json is missing). Start one with npm start, or pass --stack NAME (or set EMAIL_PIPELINE_STACK) for a deployed stack.',
    );
  });

  test('a command run outside the repository says so', async () => {
    const app = path.join(dir(), 'user-app');
    mkdirSync(app, { recursive: true });
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'user-app' }));
    const cwd = process.cwd();
    const saved = { ...process.env };
    process.chdir(app);
    delete process.env.LOCAL_STATE_DIR;
    delete process.env.EMAIL_PIPELINE_STACK;
    delete process.env.EMAIL_PIPELINE_NAME;
    try {
      const { run } = await import('../../../../lib/cli/main');
      const err: string[] = [];
      expect(await run(['dlq', 'list'], { out: () => undefined, err: (l) => err.push(l) })).toBe(1);
      expect(err.join('\n')).toContain('email-pipeline: No pipeline named: pass --stack NAME');
      expect(err.join('\n')).not.toContain('npm start');
    } finally {
      process.chdir(cwd);
      process.env = saved;
    }
  });
});
