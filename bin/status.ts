/**
 * `npm run status -- [--json] [--stack NAME] <key>`: what happened to a dedupe key.
 *
 * Target: the local pipeline (default; tables from .local/outputs.json) or a
 * deployed stack with --stack NAME (tables from its outputs; region and
 * credentials from the usual AWS settings; needs dynamodb:GetItem on both).
 *
 * Exit codes: 0 a report was printed (whatever the status, `unknown` included);
 * 1 the pipeline could not be found or read; 2 bad usage or a key that cannot
 * be a dedupe key.
 */
import '../tools/local/quiet';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { InvalidKeyError, lookupDelivery, type LookupTarget } from '../lambdas/status/lookup';
import { emulatorConfig } from '../tools/local/emulators';
import { OUTPUTS_FILE, readLocalOutputs } from '../tools/local/state';
import { formatReport, lookupTargetFromOutputs } from '../lib/status';

const USAGE = `Usage: npm run status -- [--stack NAME] <key>
       npm run -s status -- --json [--stack NAME] <key>

Prints the delivery status and timeline of a dedupe key (the idempotency-key
attribute, or the SNS MessageId). Without --stack the local pipeline (npm start) is used.`;

function fail(message: string, code: 1 | 2): never {
  console.error(code === 2 ? `${message}\n\n${USAGE}` : message);
  process.exit(code);
}

async function resolveTarget(stack: string | undefined): Promise<LookupTarget & { db: DynamoDBDocumentClient }> {
  if (!stack) {
    const outputs = readLocalOutputs();
    if (!outputs)
      fail(`No local pipeline found (${OUTPUTS_FILE} is missing). Start it with npm start, or pass --stack.`, 1);
    const target = lookupTargetFromOutputs({ ...outputs }, OUTPUTS_FILE);
    return { ...target, db: DynamoDBDocumentClient.from(new DynamoDBClient(emulatorConfig(outputs.DynamoDbEndpoint))) };
  }
  const { Stacks = [] } = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stack }));
  const outputs = Object.fromEntries((Stacks[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue]));
  const target = lookupTargetFromOutputs(outputs, `Stack ${stack}`);
  return { ...target, db: DynamoDBDocumentClient.from(new DynamoDBClient({})) };
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        stack: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 2);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (positionals.length !== 1) fail(`Expected one key, got ${positionals.length}.`, 2);
  const [key] = positionals;
  let target;
  try {
    target = await resolveTarget(values.stack);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 1);
  }
  try {
    const report = await lookupDelivery(target, key);
    console.log(values.json ? JSON.stringify(report) : formatReport(report));
  } catch (error) {
    if (error instanceof InvalidKeyError) fail(error.message, 2);
    fail(`Could not read the delivery status: ${error instanceof Error ? error.message : String(error)}`, 1);
  } finally {
    target.db.destroy();
  }
}

void main();
