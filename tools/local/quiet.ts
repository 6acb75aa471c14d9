/**
 * Imported first by the local entry points: silences the AWS SDK's Node 20
 * support notice before any client module loads.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
