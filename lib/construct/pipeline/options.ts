/**
 * The checks of the options only the CDK construct has (the shared settings
 * are checked by `resolveSettings`): the service name, the SES template names,
 * and that the bundles' esbuild target matches the Lambda runtime.
 */
import { SettingsError } from '../../settings';
import { BUNDLING } from '../bundling';
import { DEFAULT_SERVICE_NAME, RUNTIME } from '../common/runtime';

/** Throws a {@link SettingsError} naming the first option that is not valid. */
export function checkConstructOptions(props: {
  readonly serviceName?: string;
  readonly sesTemplateNames?: readonly string[];
}): void {
  const runtimeMajor = /^nodejs(\d+)\.x$/.exec(RUNTIME.name)?.[1];
  if (BUNDLING.target !== `node${runtimeMajor}`) {
    // A programming error, not a setting: lib/construct/bundling.ts and RUNTIME must move together.
    throw new Error(`esbuild target ${BUNDLING.target} does not match the Lambda runtime ${RUNTIME.name}`);
  }
  const serviceName = props.serviceName ?? DEFAULT_SERVICE_NAME;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(serviceName)) {
    throw new SettingsError('serviceName', serviceName, 'must be 1 to 128 letters, digits, ".", "_" or "-"');
  }
  for (const name of props.sesTemplateNames ?? []) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
      throw new SettingsError('sesTemplateNames', name, 'each must be 1 to 64 letters, digits, _ or -');
    }
  }
  if (props.sesTemplateNames !== undefined && props.sesTemplateNames.length === 0) {
    throw new SettingsError('sesTemplateNames', [], 'must name at least one template, or be left out to allow all');
  }
}
