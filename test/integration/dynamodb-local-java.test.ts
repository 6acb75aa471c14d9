/**
 * DynamoDB Local's JVM options reach the JVM itself (before `-jar`, where `java` reads them, not
 * after it, where DynamoDB Local would), are valid on the Java this machine has, and a JVM that
 * refuses an option fails the start with the JVM's reason instead of hanging it. Each test starts
 * a DynamoDB Local of its own: the shared one from global-setup.ts is left alone.
 *
 * The java command line is read from /proc, not from `-XX:+PrintFlagsFinal`'s table: the JVM writes
 * into the guard's stdout pipe, which Node has made non-blocking, and drops what does not fit at
 * once, so a table of 500 lines arrives with parts missing.
 */
import { readFileSync } from 'node:fs';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS } from '../../tools/dev/local/dynamodb-local-java';
import { startDynamoDbLocal, type RunningEmulator } from '../../tools/dev/local/emulators';

/** The command line of each child of `pid` (the guard's: the java process). */
function childCommandLines(pid: number): string[][] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return children.map((child) => readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').filter(Boolean));
}

describe('DynamoDB Local JVM options', () => {
  let running: RunningEmulator | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  test('the defaults are on the java command line before -jar, and DynamoDB Local answers', async () => {
    running = await startDynamoDbLocal({ javaOptions: [...DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS] });
    const client = new DynamoDBClient({ endpoint: running.endpoint, maxAttempts: 1 });
    try {
      await expect(client.send(new ListTablesCommand({ Limit: 1 }))).resolves.toBeDefined();
    } finally {
      client.destroy();
    }
    const java = childCommandLines(running.pid).find((argv) => argv.includes('-jar'));
    expect(java).toBeDefined();
    const jar = java!.indexOf('-jar');
    for (const option of DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS) {
      const at = java!.indexOf(option);
      expect({ option, beforeJar: at >= 0 && at < jar }).toEqual({ option, beforeJar: true });
    }
  }, 60_000);

  test('an option the JVM refuses fails the start, with the JVM saying which', async () => {
    await expect(startDynamoDbLocal({ javaOptions: ['-XX:+NoSuchOptionAnywhere'] })).rejects.toThrow(
      /NoSuchOptionAnywhere/,
    );
  }, 60_000);
});
