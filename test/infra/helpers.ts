/**
 * The infra suite's helpers: the pipeline stack synthesized as `cdk synth` does (cdk.json's
 * context, each app's assembly in a temporary folder removed after the file), the logical ids of
 * its main resources, and readers of the template: a resource, a function's policy statements, a
 * dashboard body, an ARN (`arnOf`) and a CloudFormation string rendered as text.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, CfnResource, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { IConstruct } from 'constructs';
import { EmailPipelineProps } from '../../lib/construct/email-pipeline';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { EmailPipelineStack, EmailPipelineStackProps } from '../../lib/construct/email-pipeline-stack';

/** The feature flags and settings `cdk synth` uses, so tests synthesize the same way. */
const CDK_JSON_CONTEXT: Record<string, unknown> = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8'),
).context;

/** The smallest valid pipeline. */
export const BASE_PROPS: EmailPipelineProps = {
  senderAddress: 'noreply@example.com',
  sesIdentity: 'example.com',
};

/** Callbacks configured: the pipeline's own, team billing's for two statuses, and team support without one. */
export const CALLBACK_PROPS: Partial<EmailPipelineProps> = {
  callbackUrl: 'https://hooks.example.com/email',
  teams: {
    billing: {
      senders: ['billing@example.com'],
      callbackUrl: 'https://billing.example.com/hooks',
      callbackStatuses: ['delivered', 'bounced'],
    },
    support: { senders: ['support@example.com'] },
  },
};

// Every app of a test file writes its cloud assembly under one temporary
// folder, removed when the file is done.
let assemblyRoot: string | undefined;
afterAll(() => {
  if (assemblyRoot !== undefined) fs.rmSync(assemblyRoot, { recursive: true, force: true });
  assemblyRoot = undefined;
});
function newOutdir(): string {
  assemblyRoot ??= fs.mkdtempSync(path.join(os.tmpdir(), 'infra-test-'));
  return fs.mkdtempSync(path.join(assemblyRoot, 'cdk.out-'));
}

export interface SynthOptions {
  /** Run the built-in CloudFormation validation plugin (about 2 s). @default false */
  readonly cfnValidation?: boolean;
  /** Run the cdk-nag AwsSolutions and Serverless checks, as bin/app.ts does. @default false */
  readonly nag?: boolean;
  /** Monitoring options of the stack. @default the stack's default (dashboard and alarms) */
  readonly monitoring?: EmailPipelineStackProps['monitoring'];
  /** Extra app context. @default none */
  readonly context?: Record<string, unknown>;
}

/** Builds an app with the pipeline stack; `mutate` runs before synthesis (escape hatches). */
export function build(
  props: Partial<EmailPipelineProps> = {},
  mutate?: (stack: EmailPipelineStack) => void,
  options: SynthOptions = {},
): { app: App; stack: EmailPipelineStack } {
  const app = new App({
    outdir: newOutdir(),
    context: {
      ...CDK_JSON_CONTEXT,
      ...options.context,
    },
    builtinCloudFormationValidation: options.cfnValidation ?? false,
  });
  const stack = new EmailPipelineStack(app, 'EmailPipeline', {
    pipeline: { ...BASE_PROPS, ...props },
    ...(options.monitoring !== undefined ? { monitoring: options.monitoring } : {}),
  });
  if (options.nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  mutate?.(stack);
  return { app, stack };
}

/** Logical ids of the pipeline's main resources. */
export interface PipelineIds {
  readonly topic: string;
  readonly highPriorityTopic: string;
  readonly queue: string;
  readonly highPriorityQueue: string;
  readonly deadLetterQueue: string;
  readonly subscriptionDeadLetterQueue: string;
  readonly table: string;
  readonly function: string;
  readonly logGroup: string;
  readonly topicKey: string;
  readonly queueKey: string;
  readonly role: string;
}

export interface Synthesized {
  readonly template: Template;
  readonly ids: PipelineIds;
  readonly stack: EmailPipelineStack;
}

/** Synthesizes the pipeline stack; returns the template and the logical ids of its main resources. */
export function synthesize(
  props: Partial<EmailPipelineProps> = {},
  mutate?: (stack: EmailPipelineStack) => void,
  options: SynthOptions = {},
): Synthesized {
  const { stack } = build(props, mutate, options);
  const template = Template.fromStack(stack);
  const p = stack.pipeline;
  const id = (c: IConstruct) => stack.getLogicalId(c.node.defaultChild as CfnResource);
  return {
    template,
    stack,
    ids: {
      topic: id(p.topic),
      highPriorityTopic: id(p.highPriorityTopic),
      queue: id(p.queue),
      highPriorityQueue: id(p.highPriorityQueue),
      deadLetterQueue: id(p.deadLetterQueue),
      subscriptionDeadLetterQueue: id(p.subscriptionDeadLetterQueue),
      table: id(p.table),
      function: id(p.sendFunction),
      logGroup: id(p.logGroup),
      topicKey: id(p.topicKey),
      queueKey: id(p.queueKey),
      role: id(p.role),
    },
  };
}

/** Synthesizes the pipeline stack and returns its template. */
export function synth(
  props: Partial<EmailPipelineProps> = {},
  mutate?: (stack: EmailPipelineStack) => void,
  options: SynthOptions = {},
): Template {
  return synthesize(props, mutate, options).template;
}

let defaults: Synthesized | undefined;

/** The pipeline with default settings, synthesized once per test file. */
export function synthDefault(): Synthesized {
  defaults ??= synthesize();
  return defaults;
}

/** A resource of the template by logical id. */
export function resource(
  template: Template,
  logicalId: string,
): { Type: string; Properties: Record<string, any> } & Record<string, any> {
  const found = template.toJSON().Resources?.[logicalId];
  if (found === undefined) throw new Error(`no resource ${logicalId} in the template`);
  return { Properties: {}, ...found };
}

/** The one L1 resource of a CloudFormation type under `scope` (for escape-hatch tests). */
export function findCfn(scope: IConstruct, type: string): CfnResource {
  const found = scope.node
    .findAll()
    .filter((c): c is CfnResource => CfnResource.isCfnResource(c) && c.cfnResourceType === type);
  if (found.length !== 1) throw new Error(`expected one ${type} under ${scope.node.path}, found ${found.length}`);
  return found[0];
}

/** The only resource of a type in the template, with its logical id. */
export function onlyResource(template: Template, type: string): { id: string; Properties: Record<string, any> } {
  const found = Object.entries(template.findResources(type));
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  const [id, resource] = found[0];
  return { id, Properties: resource.Properties ?? {} };
}

/** The send-email function (the one that has a sender address), with its logical id. */
export function sendFunctionResource(template: Template): { id: string; Properties: Record<string, any> } {
  const found = Object.entries(template.findResources('AWS::Lambda::Function')).filter(
    ([, r]) => r.Properties?.Environment?.Variables?.SENDER_ADDRESS !== undefined,
  );
  if (found.length !== 1) throw new Error(`expected one send function, found ${found.length}`);
  return { id: found[0][0], Properties: found[0][1].Properties };
}

/** Every statement of every IAM policy attached to a function's role: the send function's unless `functionId` names another. */
export function functionPolicyStatements(template: Template, functionId?: string): Array<Record<string, any>> {
  const fn =
    functionId === undefined
      ? sendFunctionResource(template)
      : { Properties: resource(template, functionId).Properties };
  const roleRef = fn.Properties.Role['Fn::GetAtt'][0];
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === roleRef))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, any>>);
}

/** Statements that allow `action` (exactly, or in a list). */
export function statementsFor(statements: Array<Record<string, any>>, action: string): Array<Record<string, any>> {
  return statements.filter((s) => s.Effect === 'Allow' && ([] as string[]).concat(s.Action).includes(action));
}

/**
 * A CloudFormation value with its intrinsics flattened into placeholder text,
 * so a dashboard body (an Fn::Join of JSON and references) can be parsed.
 */
export function flattenJoin(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join === undefined) return '<token>';
  return join[1].map(flattenJoin).join(join[0]);
}

/**
 * A CloudFormation string as text, each Ref as `{LogicalId}`, so that two spellings of one ARN
 * (a formatArn join, a template string) compare equal. Other intrinsics are refused.
 */
export function rendered(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as { Ref?: string; 'Fn::Join'?: [string, unknown[]] };
  if (v.Ref !== undefined) return `{${v.Ref}}`;
  if (v['Fn::Join'] !== undefined) return v['Fn::Join'][1].map(rendered).join(v['Fn::Join'][0]);
  throw new Error(`cannot render ${JSON.stringify(value)}`);
}

/** The ARN of a resource of the template, as CloudFormation writes it: `Fn::GetAtt` of its logical id. */
export const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** A user's own app and stack, with `context` as the app's CDK context, to build pipelines in. */
export function userStack(context: Record<string, unknown> = {}): { app: App; stack: Stack } {
  const app = new App({ context });
  return { app, stack: new Stack(app, 'MailStack') };
}
