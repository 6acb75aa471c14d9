/**
 * Settings from CDK context in a user's own app: `EmailPipeline.propsFromContext(scope)` reads every
 * `emailPipeline:` key (cdk.json `context`, `-c emailPipeline:key=value`) the way the repository's
 * app does, refusing unknown ones; and every pipeline checks the context it is built in, so that
 * nothing typed there is silently ignored: an unknown key fails the synth, a known one that the
 * pipeline's props do not carry is reported as a warning naming it.
 */
import { Annotations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import {
  CONTEXT_PREFIX,
  checkContextKeys,
  contextValues,
  settingsFromContext,
  splitContextSettings,
  type PipelineSettings,
} from '../../settings';
import { isRole, principalsFromStrings } from './principals';

/** What context gives a pipeline: its settings and the principal and template lists. */
export interface ContextProps extends PipelineSettings {
  readonly publisherPrincipals?: readonly iam.IPrincipal[];
  readonly redrivePrincipals?: readonly iam.IPrincipal[];
  readonly cancelPrincipals?: readonly iam.IPrincipal[];
  readonly sesTemplateNames?: readonly string[];
}

/** The pipeline's props from `scope`'s context; throws SettingsError naming a bad or unknown key. */
export function propsFromContext(scope: Construct): ContextProps {
  const { pipeline, app } = splitContextSettings(settingsFromContext(scope.node.getAllContext()));
  return {
    ...pipeline,
    ...(app.publisherPrincipals ? { publisherPrincipals: principalsFromStrings(app.publisherPrincipals) } : {}),
    ...(app.redrivePrincipals ? { redrivePrincipals: principalsFromStrings(app.redrivePrincipals) } : {}),
    ...(app.cancelPrincipals ? { cancelPrincipals: principalsFromStrings(app.cancelPrincipals) } : {}),
    ...(app.sesTemplateNames ? { sesTemplateNames: app.sesTemplateNames } : {}),
  };
}

/** A principal as context names it: an account id or an ARN (undefined for what context cannot name). */
function principalName(principal: iam.IPrincipal): string | undefined {
  const p = principal as { accountId?: unknown; arn?: unknown };
  if (isRole(principal)) return principal.roleArn;
  // An AccountPrincipal has an ARN too (its root user's): context names it by its id.
  if (typeof p.accountId === 'string') return p.accountId;
  if (typeof p.arn === 'string') return p.arn;
  return undefined;
}

function comparable(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map((item) =>
      typeof item === 'object' && item !== null ? principalName(item as iam.IPrincipal) : item,
    );
  }
  return value;
}

/**
 * Checks the context `scope` is built in against the props it was given: an unknown
 * `emailPipeline:` key throws (SettingsError, with the closest known key); a known key whose value
 * the props do not carry becomes a synth warning that says how to apply it. `ignore` names keys
 * another construct applies (the monitoring's `alarmEmail`); `mine` says which keys `scope` applies.
 */
export function checkContextApplied(
  scope: Construct,
  props: Readonly<Record<string, unknown>>,
  mine: (name: string) => boolean,
): void {
  const context = scope.node.getAllContext();
  checkContextKeys(context);
  const notApplied = Object.entries(contextValues(context)).filter(
    ([name, value]) => mine(name) && JSON.stringify(comparable(props[name])) !== JSON.stringify(comparable(value)),
  );
  if (notApplied.length === 0) return;
  const keys = notApplied.map(([name]) => `${CONTEXT_PREFIX}${name}`).join(', ');
  Annotations.of(scope).addWarningV2(
    'exactly-once-email:contextNotApplied',
    `${keys} ${notApplied.length === 1 ? 'is' : 'are'} set in the CDK context but not applied to ${scope.node.path}: its ` +
      'props do not carry them. Build its props with EmailPipeline.propsFromContext(this) (and override what you set in ' +
      "code; the monitoring's alarmEmail: tryGetContext('emailPipeline:alarmEmail')), or remove the context keys.",
  );
}
