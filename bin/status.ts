/**
 * `npm run status -- [--json] [--stack NAME [--region R]] <key>`: what happened to a dedupe key
 * (the command is lib/cli/status-command.ts, run with the operator CLI's conventions; it is not in
 * the packaged `email-pipeline` CLI, whose dependencies leave out the DynamoDB client).
 */
import { main, runCommand } from '../lib/cli/main';
import { statusCommand } from '../lib/cli/status-command';

main(process.argv.slice(2), (argv) => runCommand(statusCommand, argv));
