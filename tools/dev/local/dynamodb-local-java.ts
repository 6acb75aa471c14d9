/**
 * The JVM options DynamoDB Local runs with (emulators.ts puts them before `-jar`, where `java`
 * reads them), and the environment variable that replaces them: DYNAMODB_LOCAL_JAVA_OPTS, split on
 * whitespace; set to an empty string, the JVM runs with none.
 *
 * Why these (BENCHMARKS.md, "The soak", "The JVM's options"): left to itself, Java 17 gives
 * DynamoDB Local what suits a server, G1 and both JIT compilers, and on a 2-core machine C2's
 * compiling is much of its CPU in the first minute (about 30 s of compile time in a soak). With C1
 * alone (`-XX:TieredStopAtLevel=1`) a run of 3,000 emails took about 40 % less of DynamoDB Local's
 * CPU; over 20,000 its slower code cost about what C2's compiling saves, no better, no worse. The
 * serial collector costs no more CPU than G1 (collections took under 1 s of a soak) and the JVM
 * ended the soaks with less memory. None of this changes the DynamoDB requests a run makes.
 */

/** The JVM options DynamoDB Local gets when DYNAMODB_LOCAL_JAVA_OPTS is not set. */
export const DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS: readonly string[] = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/** The environment variable that replaces {@link DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS}. */
export const DYNAMODB_LOCAL_JAVA_OPTS = 'DYNAMODB_LOCAL_JAVA_OPTS';

/**
 * The JVM options for DynamoDB Local: DYNAMODB_LOCAL_JAVA_OPTS split on whitespace when it is set
 * (empty: none), otherwise the defaults. Every option must start with `-`: anything else would
 * be taken by `java` as the class to run.
 */
export function dynamoDbLocalJavaOptions(env: NodeJS.ProcessEnv = process.env): readonly string[] {
  const given = env[DYNAMODB_LOCAL_JAVA_OPTS];
  if (given === undefined) return DEFAULT_DYNAMODB_LOCAL_JAVA_OPTIONS;
  const options = given.split(/\s+/).filter((option) => option !== '');
  const stray = options.find((option) => !option.startsWith('-'));
  if (stray !== undefined) {
    throw new Error(`${DYNAMODB_LOCAL_JAVA_OPTS}: "${stray}" is not a JVM option (each starts with "-")`);
  }
  return options;
}
