import { CfnResource } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import {
  arnOf,
  functionPolicyStatements,
  statementsFor,
  synthDefault,
  synthesize,
  type Synthesized,
} from '../../../helpers';
import { NO_REDRIVE_PRINCIPAL } from '../../../../../lib/construct/pipeline/redrive-role';

/** An SES ARN of this stack; `ref`, when given, is the logical id whose Ref ends it (the owned configuration set). */
const sesArn = (resource: string, ref?: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':ses:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:${resource}`,
      ...(ref !== undefined ? [{ Ref: ref }] : []),
    ],
  ],
});
const asList = <T>(v: T | T[]): T[] => ([] as T[]).concat(v);
/** Order-insensitive view of a Resource list (IAM policy minimization sorts it). */
const asSet = (v: unknown): string[] =>
  asList(v)
    .map((r) => JSON.stringify(r))
    .sort();

describe('function permissions', () => {
  test('DynamoDB item actions are allowed on the idempotency table, and read/update on the ledger table, only', () => {
    const { template, ids, stack } = synthDefault();
    const ledgerTable = stack.getLogicalId(stack.pipeline.ledger.table.node.defaultChild as CfnResource);
    const statements = functionPolicyStatements(template);
    const allowedOn = (action: string) => statementsFor(statements, action).flatMap((s) => asSet(s.Resource));
    for (const action of ['dynamodb:PutItem', 'dynamodb:DeleteItem']) {
      expect(allowedOn(action)).toEqual(asSet(arnOf(ids.table)));
    }
    for (const action of ['dynamodb:GetItem', 'dynamodb:UpdateItem']) {
      expect(allowedOn(action).sort()).toEqual(asSet([arnOf(ids.table), arnOf(ledgerTable)]));
    }
    // Nothing wider than item access: no scans, queries, batch writes or table admin.
    const dynamoActions = statements.flatMap((s) => asList<string>(s.Action)).filter((a) => a.startsWith('dynamodb:'));
    expect(new Set(dynamoActions)).toEqual(
      new Set(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']),
    );
  });

  test('ses:SendEmail is scoped to the identity, templates and the owned configuration set, with the From address pinned', () => {
    const { template, stack } = synthDefault();
    const granting = statementsFor(functionPolicyStatements(template), 'ses:SendEmail');
    expect(granting).toHaveLength(1);
    const [s] = granting;
    expect(asList(s.Action)).toEqual(['ses:SendEmail']);
    const ownedSet = stack.getLogicalId(stack.pipeline.ledger.configurationSet?.node.defaultChild as CfnResource);
    expect(asSet(s.Resource)).toEqual(
      asSet([sesArn('identity/example.com'), sesArn('template/*'), sesArn('configuration-set/', ownedSet)]),
    );
    expect(s.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'noreply@example.com' } });
  });

  test("with teams, the From address may be senderAddress or any team's sender, and nothing else", () => {
    const { template } = synthesize({
      teams: {
        billing: { senders: ['billing@example.com', 'invoices@example.com'] },
        security: { senders: ['security@example.com'] },
      },
    });
    const [s] = statementsFor(functionPolicyStatements(template), 'ses:SendEmail');
    expect(s?.Condition).toEqual({
      StringEquals: {
        'ses:FromAddress': [
          'noreply@example.com',
          'billing@example.com',
          'invoices@example.com',
          'security@example.com',
        ],
      },
    });
  });

  test('ses:SendEmail covers the configuration set and only the listed templates when they are set', () => {
    const { template } = synthesize({ configurationSetName: 'transactional', sesTemplateNames: ['welcome', 'reset'] });
    const [s] = statementsFor(functionPolicyStatements(template), 'ses:SendEmail');
    expect(asSet(s.Resource)).toEqual(
      asSet([
        sesArn('identity/example.com'),
        sesArn('configuration-set/transactional'),
        sesArn('template/welcome'),
        sesArn('template/reset'),
      ]),
    );
  });

  test('sqs:SendMessage is allowed on the DLQ, the source queues (delayed retries) and the schedule queue only', () => {
    const { template, ids, stack } = synthDefault();
    const scheduleQueue = stack.getLogicalId(stack.pipeline.scheduleQueue.node.defaultChild as CfnResource);
    const granting = statementsFor(functionPolicyStatements(template), 'sqs:SendMessage');
    expect(new Set(granting.flatMap((s) => asList(s.Resource)).map((r) => JSON.stringify(r)))).toEqual(
      new Set(
        [arnOf(ids.deadLetterQueue), arnOf(ids.queue), arnOf(ids.highPriorityQueue), arnOf(scheduleQueue)].map((r) =>
          JSON.stringify(r),
        ),
      ),
    );
  });

  test('sqs:ChangeMessageVisibility is allowed on the source queue only', () => {
    const { template, ids } = synthDefault();
    const granting = statementsFor(functionPolicyStatements(template), 'sqs:ChangeMessageVisibility');
    expect(new Set(granting.flatMap((s) => asSet(s.Resource)))).toEqual(
      new Set([...asSet(arnOf(ids.queue)), ...asSet(arnOf(ids.highPriorityQueue))]),
    );
  });

  test('the role has no managed policies and writes logs to its own log group only', () => {
    const { template, ids } = synthDefault();
    const role = template.toJSON().Resources[ids.role];
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const logs = functionPolicyStatements(template).filter((s) =>
      asList<string>(s.Action).some((a) => a.startsWith('logs:')),
    );
    expect(logs).toHaveLength(1);
    expect(asSet(logs[0].Action)).toEqual(asSet(['logs:CreateLogStream', 'logs:PutLogEvents']));
    expect(asList(logs[0].Resource)).toEqual([arnOf(ids.logGroup)]);
  });

  test('the send function may use the queue key (read the queue, write the DLQ), the table key through DynamoDB, the attachments key (attachments-bucket.test.ts), and no other key', () => {
    const { template, ids, stack } = synthDefault();
    const tableKey = stack.getLogicalId(stack.pipeline.tableKey!.node.defaultChild as CfnResource);
    const attachmentsKey = stack.getLogicalId(stack.pipeline.attachmentsKey.node.defaultChild as CfnResource);
    const kmsStatements = functionPolicyStatements(template).filter((s) =>
      asList<string>(s.Action).some((a) => a.startsWith('kms:')),
    );
    const on = (keyId: string) => kmsStatements.filter((s) => asSet(s.Resource)[0] === asSet(arnOf(keyId))[0]);
    expect(on(ids.queueKey).length + on(tableKey).length + on(attachmentsKey).length).toBe(kmsStatements.length);
    expect(new Set(on(ids.queueKey).flatMap((s) => asList<string>(s.Action)))).toEqual(
      new Set(['kms:Decrypt', 'kms:GenerateDataKey']),
    );
    expect(on(tableKey)).toEqual([
      expect.objectContaining({
        Action: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
        Condition: {
          StringEquals: {
            'kms:ViaService': { 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
          },
        },
      }),
    ]);
  });

  test('with customerManagedTableKey=false, the send function may use the queue key (and the attachments key) only', () => {
    const { template, ids, stack } = synthesize({ customerManagedTableKey: false });
    const attachmentsKey = stack.getLogicalId(stack.pipeline.attachmentsKey.node.defaultChild as CfnResource);
    const kmsStatements = functionPolicyStatements(template).filter((s) =>
      asList<string>(s.Action).some((a) => a.startsWith('kms:')),
    );
    for (const s of kmsStatements) {
      expect([[arnOf(ids.queueKey)], [arnOf(attachmentsKey)]]).toContainEqual(asList(s.Resource));
    }
  });

  test('no permission of the function uses Resource "*"', () => {
    const { template } = synthesize({ configurationSetName: 'transactional' });
    const statements = functionPolicyStatements(template);
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) expect(asList(s.Resource)).not.toContain('*');
  });
});

describe('redrive role', () => {
  /** The role's logical id and every statement of the IAM policies attached to it. */
  function redriveRole(s: Synthesized): { id: string; statements: Array<Record<string, any>> } {
    const id = s.stack.getLogicalId(s.stack.pipeline.redriveRole.node.defaultChild as CfnResource);
    const statements = Object.values(s.template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === id))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
    return { id, statements };
  }
  const resourcesOf = (statements: Array<Record<string, any>>, action: string) =>
    asSet(statementsFor(statements, action).flatMap((s) => asList(s.Resource)));

  /** The account the trust is evaluated in, and its partition (what the template's Refs stand for). */
  const ACCOUNT = '123456789012';
  const resolveArn = (value: unknown): string => {
    if (typeof value === 'string') return value;
    const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (!join) throw new Error(`cannot resolve ${JSON.stringify(value)}`);
    const refs: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::AccountId': ACCOUNT };
    return join[1].map((part) => (typeof part === 'string' ? part : refs[(part as { Ref: string }).Ref])).join('');
  };
  /**
   * Whether the role's trust policy lets `caller` (a role or user ARN: the root user cannot call
   * sts:AssumeRole) assume it, as IAM reads the statements the template holds: a principal is the
   * caller's ARN or its account's root (the account: its IAM then decides, assumed to allow); every
   * condition must hold. A condition this does not model fails the test rather than pass unread.
   */
  function trustAdmits(s: Synthesized, caller: string): boolean {
    const role = s.template.toJSON().Resources[redriveRole(s).id].Properties;
    const account = caller.split(':')[4];
    return (role.AssumeRolePolicyDocument.Statement as Array<Record<string, any>>).some((st) => {
      if (st.Effect !== 'Allow' || !asList(st.Action).includes('sts:AssumeRole')) return false;
      const named = asList(st.Principal?.AWS ?? []).map(resolveArn);
      if (!named.includes(caller) && !named.includes(`arn:aws:iam::${account}:root`)) return false;
      return Object.entries((st.Condition ?? {}) as Record<string, Record<string, unknown>>).every(([op, keys]) => {
        if (op !== 'StringEquals') throw new Error(`condition operator ${op} is not modelled`);
        return Object.entries(keys).every(([key, values]) => {
          if (key !== 'aws:PrincipalArn') throw new Error(`condition key ${key} is not modelled`);
          return asList(values).map(resolveArn).includes(caller);
        });
      });
    });
  }
  const admin = `arn:aws:iam::${ACCOUNT}:role/Admin`;
  const powerUser = `arn:aws:iam::${ACCOUNT}:user/power`;
  const outsider = 'arn:aws:iam::210987654321:role/oncall';
  const warnings = (s: Synthesized) =>
    Annotations.fromStack(s.stack)
      .findWarning('*', Match.stringLikeRegexp('redriveRoleUnassumable'))
      .map((w) => String(w.entry.data));

  test('with no redrive principals listed, nobody may assume it: not an administrator or any other principal of the account', () => {
    const s = synthDefault();
    for (const caller of [admin, powerUser, outsider]) expect(trustAdmits(s, caller)).toBe(false);
    const role = s.template.toJSON().Resources[redriveRole(s).id].Properties;
    // The account is named only under a condition on aws:PrincipalArn that is no ARN at all.
    for (const st of role.AssumeRolePolicyDocument.Statement) {
      expect(st.Condition).toEqual({ StringEquals: { 'aws:PrincipalArn': NO_REDRIVE_PRINCIPAL } });
    }
    expect(NO_REDRIVE_PRINCIPAL).not.toMatch(/^arn:/);
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(role.MaxSessionDuration).toBe(3600);
  });

  test('with none listed the synth warns, naming redrivePrincipals and redriveRoleAssumedBy; with some, it does not', () => {
    const [warning, ...more] = warnings(synthDefault());
    expect(more).toEqual([]);
    expect(warning).toMatch(/Nobody may assume the redrive role/);
    expect(warning).toContain('redrivePrincipals');
    expect(warning).toContain('redriveRoleAssumedBy');
    expect(warning).toContain('emailPipeline:redrivePrincipals');
    const listed = synthesize({ redrivePrincipals: [new iam.ArnPrincipal(`arn:aws:iam::${ACCOUNT}:role/oncall`)] });
    expect(warnings(listed)).toEqual([]);
    const assumedBy = synthesize({ redriveRoleAssumedBy: new iam.ArnPrincipal(`arn:aws:iam::${ACCOUNT}:role/oncall`) });
    expect(warnings(assumedBy)).toEqual([]);
  });

  test('with redrivePrincipals, only they may assume it: not the account, not an outsider', () => {
    const oncall = `arn:aws:iam::${ACCOUNT}:role/oncall`;
    const ada = `arn:aws:iam::${ACCOUNT}:user/ada`;
    const s = synthesize({ redrivePrincipals: [new iam.ArnPrincipal(oncall), new iam.ArnPrincipal(ada)] });
    const role = s.template.toJSON().Resources[redriveRole(s).id].Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: [oncall, ada] } },
    ]);
    expect(trustAdmits(s, oncall)).toBe(true);
    expect(trustAdmits(s, ada)).toBe(true);
    for (const caller of [admin, powerUser, outsider]) expect(trustAdmits(s, caller)).toBe(false);
    expect(JSON.stringify(role.AssumeRolePolicyDocument)).not.toContain(':root');
  });

  test('an account is refused as a redrive principal, so the trust cannot widen to it', () => {
    expect(() => synthesize({ redrivePrincipals: [new iam.AccountPrincipal('123456789012')] })).toThrow(
      /redrivePrincipals.*role or a user/,
    );
  });

  test('redriveRoleAssumedBy names who may assume it instead', () => {
    const s = synthesize({ redriveRoleAssumedBy: new iam.ArnPrincipal('arn:aws:iam::123456789012:role/oncall') });
    const role = s.template.toJSON().Resources[redriveRole(s).id].Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: 'arn:aws:iam::123456789012:role/oncall' } },
    ]);
  });

  test('may list, redrive and purge the DLQ and the subscription DLQ, send to the work queue and use the queue key: nothing else', () => {
    const s = synthDefault();
    const { statements } = redriveRole(s);
    const actions = new Set(statements.flatMap((st) => asList<string>(st.Action)));
    expect(actions).toEqual(
      new Set([
        'cloudformation:DescribeStacks',
        'sqs:GetQueueAttributes',
        'sqs:ReceiveMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:StartMessageMoveTask',
        'sqs:ListMessageMoveTasks',
        'sqs:CancelMessageMoveTask',
        'sqs:PurgeQueue',
        'sqs:SendMessage',
        'kms:Decrypt',
        'kms:GenerateDataKey',
        'lambda:GetEventSourceMapping',
        'lambda:UpdateEventSourceMapping',
      ]),
    );
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:PurgeQueue', 'sqs:StartMessageMoveTask']) {
      expect(resourcesOf(statements, action)).toEqual(
        asSet([arnOf(s.ids.deadLetterQueue), arnOf(s.ids.subscriptionDeadLetterQueue)]),
      );
    }
    // It sends to the work queue only (never to a DLQ, never to the ledger's buffer).
    expect(resourcesOf(statements, 'sqs:SendMessage')).toEqual(asSet(arnOf(s.ids.queue)));
    expect(resourcesOf(statements, 'kms:Decrypt')).toEqual(asSet(arnOf(s.ids.queueKey)));
    expect(resourcesOf(statements, 'cloudformation:DescribeStacks')).toEqual(asSet({ Ref: 'AWS::StackId' }));
    for (const st of statements) {
      expect(st.Effect).toBe('Allow');
      expect(asList(st.Resource)).not.toContain('*');
    }
  });

  test("may read and switch the ledger function's mapping of the ledger DLQ, and no other mapping", () => {
    const s = synthDefault();
    const { statements } = redriveRole(s);
    const { ledger } = s.stack.pipeline;
    const mappingId = s.stack.getLogicalId(
      ledger.ledgerFunction.node
        .findAll()
        .find(
          (c): c is CfnResource =>
            CfnResource.isCfnResource(c) &&
            c.cfnResourceType === 'AWS::Lambda::EventSourceMapping' &&
            JSON.stringify(s.stack.resolve((c as any).eventSourceArn)) ===
              JSON.stringify(s.stack.resolve(ledger.bufferDeadLetterQueue.queueArn)),
        )!,
    );
    const mappingArn = {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':lambda:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          ':event-source-mapping:',
          { Ref: mappingId },
        ],
      ],
    };
    for (const action of ['lambda:UpdateEventSourceMapping', 'lambda:GetEventSourceMapping']) {
      const allowed = statementsFor(statements, action);
      expect(allowed).toHaveLength(1);
      expect(allowed[0].Resource).toEqual(mappingArn);
    }
    // Reading is as it was; the switch keeps the mapping on the ledger function (no other target).
    expect(statementsFor(statements, 'lambda:GetEventSourceMapping')[0].Condition).toBeUndefined();
    const ledgerFunctionId = s.stack.getLogicalId(ledger.ledgerFunction.node.defaultChild as CfnResource);
    expect(statementsFor(statements, 'lambda:UpdateEventSourceMapping')[0].Condition).toEqual({
      StringEquals: { 'lambda:FunctionArn': arnOf(ledgerFunctionId) },
    });
    expect(asList(statementsFor(statements, 'lambda:UpdateEventSourceMapping')[0].Action)).toEqual([
      'lambda:UpdateEventSourceMapping',
    ]);
    expect(statements.flatMap((st) => asList<string>(st.Action)).filter((a) => a.startsWith('lambda:'))).toEqual([
      'lambda:GetEventSourceMapping',
      'lambda:UpdateEventSourceMapping',
    ]);
    // It follows the ledger DLQ's depth; it may not send to it nor to the buffer.
    const ledgerDlq = s.stack.getLogicalId(ledger.bufferDeadLetterQueue.node.defaultChild as CfnResource);
    expect(resourcesOf(statements, 'sqs:GetQueueAttributes')).toContain(asSet(arnOf(ledgerDlq))[0]);
    expect(resourcesOf(statements, 'sqs:ReceiveMessage')).not.toContain(asSet(arnOf(ledgerDlq))[0]);
  });

  test('its ARN is a stack output', () => {
    const s = synthDefault();
    s.template.hasOutput('RedriveRoleArn', { Value: arnOf(redriveRole(s).id) });
  });
});
