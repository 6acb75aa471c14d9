#!/usr/bin/env node
// The operator CLI (lib/cli/main.ts). Installed on a Node older than `engines` admits (npm only
// warns), every SDK client would print the SDK's Node version notice into the CLI's stderr.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- after the line above, before any SDK module loads
(require('../lib/cli/main') as typeof import('../lib/cli/main')).main();
