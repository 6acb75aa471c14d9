/**
 * Reading a stack's outputs (lib/cli/target.ts): which pipelines they describe (each EmailPipeline's
 * JSON `Endpoints` output, its monitoring's merged in, or a stack's flat outputs) and which one a
 * command means (`--pipeline`). Pure: CloudFormation's answer comes in as data.
 */
import { OperationError, suggestion } from './errors';
import { MONITORING_MARK, OUTPUTS_VERSION, PACKAGE_NAME, PIPELINE_MARK, TARGET_ENV } from './target-names';

/** One output of CloudFormation's DescribeStacks answer. */
export interface StackOutput {
  readonly OutputKey?: string | undefined;
  readonly OutputValue?: string | undefined;
}

/** The pipeline a stack's outputs describe. */
export interface SelectedPipeline {
  /** Its construct path in the stack; undefined for a stack's flat outputs. */
  readonly path?: string;
  readonly outputs: Readonly<Record<string, string>>;
}

/** The flat outputs that make a stack one pipeline's (the repository's EmailPipelineStack, older deployments). */
const FLAT_MARKS = ['TopicArn', 'DeadLetterQueueUrl'] as const;

/** An output value as the JSON object it holds, or undefined. */
function jsonObject(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined || !value.trimStart().startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The outputs that are objects, kept as the JSON they came as: the teams' topics (team-option.ts
 * reads them back) and the callbacks' queues and table (callbacks.ts).
 */
const OBJECT_OUTPUTS: readonly string[] = ['Teams', 'Callbacks'];

/** The values of a described object as outputs: strings as they are, numbers and booleans as text, {@link OBJECT_OUTPUTS} as JSON. */
function described(object: Record<string, unknown>, marks: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(object)) {
    if (marks.includes(key) || key === 'v') continue;
    if (typeof value === 'string') out[key] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[key] = String(value);
    else if (OBJECT_OUTPUTS.includes(key) && typeof value === 'object' && value !== null)
      out[key] = JSON.stringify(value);
  }
  return out;
}

/** The pipelines a stack's outputs describe, by construct path (monitoring merged in), sorted by path. */
export function describedPipelines(
  stack: string,
  outputs: readonly StackOutput[],
): Map<string, Record<string, string>> {
  const pipelines = new Map<string, Record<string, string>>();
  const monitoring: [string, Record<string, string>][] = [];
  for (const output of outputs) {
    const object = jsonObject(output.OutputValue);
    if (!object) continue;
    const pipeline = object[PIPELINE_MARK];
    const monitored = object[MONITORING_MARK];
    const at = typeof pipeline === 'string' ? pipeline : typeof monitored === 'string' ? monitored : undefined;
    if (at === undefined) continue;
    if (typeof object.v === 'number' && object.v > OUTPUTS_VERSION) {
      throw new OperationError(
        `The output ${output.OutputKey ?? ''} of stack ${stack} describes pipeline ${at} in version ${object.v} of ` +
          `its outputs; this CLI reads version ${OUTPUTS_VERSION}: install the version of ${PACKAGE_NAME} the stack was deployed with.`,
      );
    }
    if (typeof pipeline === 'string') {
      if (pipelines.has(pipeline)) {
        throw new OperationError(`Stack ${stack} has two outputs describing pipeline ${pipeline}: deploy it again.`);
      }
      pipelines.set(pipeline, described(object, [PIPELINE_MARK]));
    } else {
      monitoring.push([at, described(object, [MONITORING_MARK])]);
    }
  }
  for (const [at, values] of monitoring) {
    const pipeline = pipelines.get(at);
    // The pipeline's own values win: monitoring only adds its topics and alarm prefix.
    if (pipeline) pipelines.set(at, { ...values, ...pipeline });
  }
  return new Map([...pipelines.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const lastPart = (at: string) => at.slice(at.lastIndexOf('/') + 1);

/**
 * The pipeline of a stack that `wanted` names (its path, or the path's last part), or the stack's
 * only one. Throws OperationError naming the stack and listing its pipelines when `wanted` names
 * none or several, or when it names none and the stack holds several.
 */
export function selectPipeline(
  stack: string,
  outputs: readonly StackOutput[],
  wanted: string | undefined,
): SelectedPipeline {
  const pipelines = describedPipelines(stack, outputs);
  const paths = [...pipelines.keys()];
  const list = paths.join(', ');
  const choose = `--pipeline NAME (or ${TARGET_ENV.pipeline})`;
  if (paths.length === 0) {
    const flat = Object.fromEntries(
      outputs.flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])),
    );
    if (!FLAT_MARKS.some((mark) => flat[mark])) {
      throw new OperationError(
        `Stack ${stack} holds no email pipeline: none of its ${outputs.length} output(s) describes one. Check the ` +
          `stack name (--stack) and the region; a pipeline deployed with an older version of ${PACKAGE_NAME} ` +
          'describes itself once deployed again with this one.',
      );
    }
    if (wanted !== undefined) {
      throw new OperationError(
        `Stack ${stack} has the outputs of one pipeline that names itself nowhere (deployed with an older version ` +
          `of ${PACKAGE_NAME}, or this repository's own stack): leave out --pipeline and ${TARGET_ENV.pipeline}.`,
      );
    }
    return { outputs: flat };
  }
  if (wanted === undefined) {
    if (paths.length === 1) return { path: paths[0] as string, outputs: pipelines.get(paths[0] as string) ?? {} };
    throw new OperationError(
      `Stack ${stack} holds ${paths.length} email pipelines: ${list}. Say which with ${choose}: its path or the path's last part.`,
    );
  }
  const exact = pipelines.get(wanted);
  if (exact) return { path: wanted, outputs: exact };
  const byName = paths.filter((at) => lastPart(at) === wanted);
  if (byName.length === 1) {
    const at = byName[0] as string;
    return { path: at, outputs: pipelines.get(at) ?? {} };
  }
  if (byName.length > 1) {
    throw new OperationError(
      `"${wanted}" names ${byName.length} pipelines of stack ${stack}: ${byName.join(', ')}. Give the whole path, e.g. --pipeline ${byName[0] ?? ''}.`,
    );
  }
  const known = [...new Set([...paths, ...paths.map(lastPart)])];
  throw new OperationError(
    `Stack ${stack} holds no pipeline "${wanted}"${suggestion(wanted, known)}; it holds: ${list}.`,
  );
}
