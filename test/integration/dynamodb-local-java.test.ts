/**
 * DynamoDB Local's JVM options reach the JVM itself (before `-jar`, where `java` reads them, not
 * after it, where DynamoDB Local would), are valid on the Java this machine has, and a JVM that
 * refuses an option fails the start with the JVM's reason instead of hanging it. Each test starts
 * a DynamoDB Local of its own: the shared one from global-setup.ts is left alone.
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS } from '../../tools/dev/local/dynamodb-local-java';
import { startDynamoDbLocal, type RunningEmulator } from '../../tools/dev/local/emulators';

/** The value of one flag in `-XX:+PrintFlagsFinal`'s table, and whether the command line set it. */
function flag(lines: readonly string[], name: string): { value: string; fromCommandLine: boolean } | undefined {
  const line = lines.find((l) => new RegExp(`^\\s*\\S+\\s+${name}\\s+=`).test(l));
  if (!line) return undefined;
  const value = /=\s*(\S+)/.exec(line)?.[1] ?? '';
  return { value, fromCommandLine: line.includes('{command line}') };
}

/** What an `-XX:` option sets: `-XX:+Name` true, `-XX:-Name` false, `-XX:Name=value` the value. */
function expected(option: string): { name: string; value: string } {
  const match = /^-XX:([+-])?(\w+)(?:=(\S+))?$/.exec(option);
  if (!match) throw new Error(`not an -XX: option: ${option}`);
  const [, sign, name, value] = match;
  return { name: name!, value: sign === '+' ? 'true' : sign === '-' ? 'false' : value! };
}

describe('DynamoDB Local JVM options', () => {
  let running: RunningEmulator | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  test('the defaults are the options the JVM runs with, and DynamoDB Local answers', async () => {
    const lines: string[] = [];
    running = await startDynamoDbLocal({
      javaOptions: [...DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS, '-XX:+PrintFlagsFinal'],
      onOutput: (line) => lines.push(line),
    });

    const client = new DynamoDBClient({ endpoint: running.endpoint, maxAttempts: 1 });
    try {
      await expect(client.send(new ListTablesCommand({ Limit: 1 }))).resolves.toBeDefined();
    } finally {
      client.destroy();
    }
    for (const option of DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS) {
      const { name, value } = expected(option);
      expect({ name, ...flag(lines, name) }).toEqual({ name, value, fromCommandLine: true });
    }
    // The collector the defaults choose replaces the one Java 17 picks on its own.
    expect(flag(lines, 'UseG1GC')).toEqual({ value: 'false', fromCommandLine: false });
    expect(flag(lines, 'TieredStopAtLevel')).toEqual({ value: '1', fromCommandLine: true });
  }, 60_000);

  test('an option the JVM refuses fails the start, with the JVM saying which', async () => {
    await expect(startDynamoDbLocal({ javaOptions: ['-XX:+NoSuchOptionAnywhere'] })).rejects.toThrow(
      /NoSuchOptionAnywhere/,
    );
  }, 60_000);
});
