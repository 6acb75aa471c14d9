/**
 * The arguments of the local commands that take none (`npm start`, `npm run demo`: their settings
 * come from the environment): `--help` prints the usage and exits 0; anything else is a usage
 * error, exit 2, with the usage's first paragraph, as the operator CLI reports one.
 */
export function acceptNoArguments(program: string, usage: string, argv: readonly string[], hint = ''): void {
  if (argv.length === 0) return;
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    console.log(usage);
    process.exit(0);
  }
  console.error(`${program}: unexpected argument "${argv[0] ?? ''}"${hint}`);
  console.error(usage.split('\n\n')[0]);
  process.exit(2);
}
