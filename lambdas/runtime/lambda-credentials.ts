/**
 * The credential chain of the pipeline's Lambda bundles. The bundler puts this module in place
 * of `@aws-sdk/credential-provider-node` (tools/build/lambda-bundle.ts), so every SDK client in a
 * function resolves its credentials here: from the environment, which is where Lambda puts the
 * execution role's credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
 * `AWS_SESSION_TOKEN`), or else from a container credentials endpoint
 * (`AWS_CONTAINER_CREDENTIALS_FULL_URI` / `_RELATIVE_URI`).
 *
 * The SDK's own default chain also reads shared config files, SSO, web identity tokens, a
 * credential process and EC2 instance metadata: 109 KiB of code (STS, SSO and sign-in clients
 * among it) that a Lambda function parses at every cold start and never runs. BENCHMARKS.md,
 * section 4, has the measured difference. Outside the bundles (tests, the CLI, the publisher
 * client) the SDK's default chain is unchanged.
 */
import type { DefaultProviderInit } from '@aws-sdk/credential-provider-node';
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { fromHttp } from '@aws-sdk/credential-provider-http';
import { chain, memoize } from '@smithy/core/config';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

/** Credentials that expire are fetched again this long before they do (as the SDK's default chain). */
const REFRESH_BEFORE_EXPIRY_MS = 5 * 60 * 1000;

/** Same signature as `defaultProvider` of `@aws-sdk/credential-provider-node`, which the bundler replaces with it. */
export function defaultProvider(init: DefaultProviderInit = {}): AwsCredentialIdentityProvider {
  // fromHttp checks its environment when it is built: build it only once the environment had no keys.
  const fromContainer: AwsCredentialIdentityProvider = (properties) => fromHttp(init)(properties);
  return memoize(
    chain(fromEnv(init), fromContainer),
    (credentials: AwsCredentialIdentity) =>
      credentials.expiration !== undefined && credentials.expiration.getTime() - Date.now() < REFRESH_BEFORE_EXPIRY_MS,
    (credentials: AwsCredentialIdentity) => credentials.expiration !== undefined,
  );
}
