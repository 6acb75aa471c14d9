/**
 * DynamoDB Local's JVM options: the defaults unless DYNAMODB_LOCAL_JAVA_OPTS is set, which
 * replaces them (empty: none), and nothing that `java` would take for the class to run.
 */
import {
  DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS,
  dynamoDbLocalJavaOptions,
} from '../../../../../tools/dev/local/dynamodb-local-java';

describe('dynamoDbLocalJavaOptions', () => {
  test('without DYNAMODB_LOCAL_JAVA_OPTS: the defaults, each a JVM option', () => {
    const options = dynamoDbLocalJavaOptions({});
    expect(options).toEqual(DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS);
    expect(options.length).toBeGreaterThan(0);
    for (const option of options) expect(option).toMatch(/^-/);
  });

  test('DYNAMODB_LOCAL_JAVA_OPTS replaces the defaults, split on any whitespace', () => {
    expect(dynamoDbLocalJavaOptions({ DYNAMODB_LOCAL_JAVA_OPTS: ' -Xmx2g\t-XX:+UseG1GC\n' })).toEqual([
      '-Xmx2g',
      '-XX:+UseG1GC',
    ]);
  });

  test('an empty DYNAMODB_LOCAL_JAVA_OPTS runs the JVM with no options', () => {
    expect(dynamoDbLocalJavaOptions({ DYNAMODB_LOCAL_JAVA_OPTS: '' })).toEqual([]);
    expect(dynamoDbLocalJavaOptions({ DYNAMODB_LOCAL_JAVA_OPTS: '   ' })).toEqual([]);
  });

  test('a word without a leading dash is refused, naming it', () => {
    expect(() => dynamoDbLocalJavaOptions({ DYNAMODB_LOCAL_JAVA_OPTS: '-Xmx1g Xss512k' })).toThrow(
      /DYNAMODB_LOCAL_JAVA_OPTS: "Xss512k" is not a JVM option/,
    );
  });
});
