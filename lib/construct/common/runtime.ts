/**
 * What every function of the pipeline shares: the Lambda runtime (the bundles' esbuild target in
 * bundling.ts names the same Node.js major version) and the default service name.
 */
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SERVICE_NAME } from '../handler-env';

/** The Lambda runtime; {@link BUNDLING}.target must name the same Node.js major version. */
export const RUNTIME = lambda.Runtime.NODEJS_24_X;

/** Default of {@link EmailPipelineProps.serviceName} (the local pipeline's too). */
export const DEFAULT_SERVICE_NAME = SERVICE_NAME;
