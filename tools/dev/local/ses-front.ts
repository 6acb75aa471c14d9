/**
 * The local SES's event publishing: an HTTP layer in front of aws-ses-v2-local that adds what
 * SES does and the emulator does not.
 *
 * - Configuration sets and their event destinations (EventBridge, the default bus only, as SES
 *   allows; or SNS), through SES v2's own API (CreateConfigurationSet,
 *   CreateConfigurationSetEventDestination), so the local pipeline creates them as a deployment
 *   would. A SendEmail naming an unknown set is refused with SES's NotFoundException.
 * - The default event bus (event-bus.ts): rules with an SQS target, added with `POST
 *   /local/eventbridge/rules` ({ Name, EventPattern, QueueUrl }: a local call, where a deployment
 *   has CloudFormation create the rule), and SES's events put on it in EventBridge's envelope.
 * - For every email the emulator accepts under a configuration set with a destination, the
 *   events SES publishes, in SES's format (`eventType`, `mail` with `messageId`, `timestamp`,
 *   `sendingAccountId` and the send's `tags` beside SES's own `ses:configuration-set` and
 *   `ses:caller-identity`, and the `delivery` / `bounce` / `complaint` object), also when the
 *   caller stopped waiting: the request to the emulator is never cut short by the caller.
 *   The caller identity is the request's access key id: locally it stands for the IAM name
 *   (a role's name) SES reports for the caller.
 * - The mailbox simulator: `success@simulator.amazonses.com` delivered, `bounce@` a permanent
 *   bounce, `complaint@` delivered then a complaint, `suppressionlist@` a bounce
 *   (OnAccountSuppressionList), any other address delivered.
 *
 * - SES tenants (ses-tenants.ts): CreateTenant, CreateTenantResourceAssociation, SendEmail's
 *   TenantName, and each email's tenant in the mailbox (`/store`).
 *
 * Everything else (templates, and the mailbox but for the additions above) passes through unchanged. It runs in
 * the process that starts the emulators; another layer (a rate limiter, a fault proxy) can sit
 * in front of it or behind it, as each only speaks HTTP.
 */
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { LOCAL_ACCOUNT_ID } from '../../../lib/cli/target';
import { emulatorConfig } from './emulator-config';
import { loopbackAgent } from './loopback-agent';
import { eventBridgeEnvelope, LOCAL_DEFAULT_BUS_ARN, LocalEventBus } from './event-bus';
import { contentRefusal, withHeadersShown, type SendContent } from './ses-content';
import { LocalTenants } from './ses-tenants';

/** SES v2 event types (MatchingEventTypes) and the eventType SES writes for each. */
export const SES_EVENT_TYPES = {
  SEND: 'Send',
  REJECT: 'Reject',
  BOUNCE: 'Bounce',
  COMPLAINT: 'Complaint',
  DELIVERY: 'Delivery',
  DELIVERY_DELAY: 'DeliveryDelay',
  RENDERING_FAILURE: 'Rendering Failure',
} as const;
type MatchingType = keyof typeof SES_EVENT_TYPES;

/** Who made an SES request: the access key id of its SigV4 `Authorization` header (locally, the caller's name). */
export function callerIdentityOf(authorization: string | undefined): string {
  const match = /Credential=([^/,\s]+)\//.exec(authorization ?? '');
  return match?.[1] ?? 'anonymous';
}

/** The mailbox simulator's domain. */
export const SIMULATOR_DOMAIN = 'simulator.amazonses.com';

/** What the mailbox simulator does with a recipient. */
export type SimulatedOutcome = 'delivered' | 'bounce' | 'complaint' | 'suppressed';

/** The simulator's outcome for an address (`success+label@…` works as in SES); any other address is delivered. */
export function simulatedOutcome(address: string): SimulatedOutcome {
  const match = /^([^@+]+)(?:\+[^@]*)?@(.+)$/.exec(address.trim().toLowerCase());
  if (!match || match[2] !== SIMULATOR_DOMAIN) return 'delivered';
  const local = match[1];
  if (local === 'bounce') return 'bounce';
  if (local === 'complaint') return 'complaint';
  if (local === 'suppressionlist') return 'suppressed';
  return 'delivered';
}

interface Destination {
  readonly name: string;
  readonly enabled: boolean;
  readonly types: ReadonlySet<MatchingType>;
  /** An SNS destination's topic, or the default bus for an EventBridge destination. */
  readonly target: { readonly topicArn: string } | { readonly eventBus: 'default' };
}

interface SendEmailBody {
  readonly TenantName?: string;
  readonly FromEmailAddress?: string;
  readonly Destination?: { ToAddresses?: string[]; CcAddresses?: string[]; BccAddresses?: string[] };
  readonly EmailTags?: { Name?: string; Value?: string }[];
  readonly ConfigurationSetName?: string;
  readonly Content?: { Simple?: { Subject?: { Data?: string } } };
}

export interface SesFrontOptions {
  /** aws-ses-v2-local's base URL. */
  readonly upstream: string;
  /** Where SNS event destinations are published, and where the event bus's rules send (fauxqs: SNS and SQS). */
  readonly snsEndpoint: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** Events of a send whose tags match are held back until {@link SesFront.release} (fault injection). */
  readonly holdEvents?: (tags: Readonly<Record<string, string>>) => boolean;
  /** Told about every publish that failed (the event is then lost, as SES events can be). */
  readonly onPublishError?: (error: unknown) => void;
}

export interface SesFront {
  readonly endpoint: string;
  readonly port: number;
  /** Events published so far (for tests and the benchmark). */
  readonly published: number;
  /** Resolves when every accepted send has had its events published. */
  idle(): Promise<void>;
  /** Publishes the held-back events now and stops holding. */
  release(): Promise<void>;
  stop(): Promise<void>;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function answer(res: http.ServerResponse, status: number, body: unknown, errorType?: string): void {
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  res.end(text);
}

function sesError(res: http.ServerResponse, status: number, type: string, message: string): void {
  answer(res, status, { message }, type);
}

function json<T>(body: Buffer): T | undefined {
  try {
    return JSON.parse(body.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Pooled connections to the emulator, each closed long before the upstream would (loopback-agent.ts). */
const UPSTREAM_AGENT = loopbackAgent();

/** How long the layer keeps an idle client connection open. */
const KEEP_ALIVE_MS = 65_000;

/** Forwards a request to the emulator, whatever the caller does meanwhile. */
function forward(
  upstream: string,
  req: http.IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const target = new URL(req.url ?? '/', upstream);
  return new Promise((resolve, reject) => {
    const out = http.request(
      target,
      {
        method: req.method,
        headers: { ...req.headers, host: target.host, 'content-length': body.length },
        agent: UPSTREAM_AGENT,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 502, headers: response.headers, body: Buffer.concat(chunks) }),
        );
        response.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

function relay(res: http.ServerResponse, reply: { status: number; headers: http.IncomingHttpHeaders; body: Buffer }) {
  if (res.writableEnded || res.destroyed) return; // the caller stopped waiting
  const headers = { ...reply.headers };
  delete headers['transfer-encoding'];
  headers['content-length'] = String(reply.body.length);
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/** The SES events for one accepted email, in the order SES publishes them. */
export function sesEventsFor(
  send: SendEmailBody,
  messageId: string,
  configurationSetName: string,
  acceptedAt: number,
  callerIdentity: string,
): Record<string, unknown>[] {
  const to = send.Destination?.ToAddresses ?? [];
  const recipients = [...to, ...(send.Destination?.CcAddresses ?? []), ...(send.Destination?.BccAddresses ?? [])];
  const source = send.FromEmailAddress ?? '';
  const tags: Record<string, string[]> = {
    'ses:configuration-set': [configurationSetName],
    'ses:source-ip': ['127.0.0.1'],
    'ses:from-domain': [source.split('@')[1] ?? ''],
    'ses:caller-identity': [callerIdentity],
  };
  for (const tag of send.EmailTags ?? []) if (tag.Name && tag.Value !== undefined) tags[tag.Name] = [tag.Value];
  const mail = {
    timestamp: new Date(acceptedAt).toISOString(),
    source,
    sendingAccountId: LOCAL_ACCOUNT_ID,
    messageId,
    destination: recipients,
    headersTruncated: false,
    commonHeaders: { from: [source], to, messageId, subject: send.Content?.Simple?.Subject?.Data ?? '' },
    tags,
  };
  const at = (ms: number) => new Date(acceptedAt + ms).toISOString();
  const byOutcome = (outcome: SimulatedOutcome) => recipients.filter((r) => simulatedOutcome(r) === outcome);
  const delivered = [...byOutcome('delivered'), ...byOutcome('complaint')];
  const events: Record<string, unknown>[] = [{ eventType: 'Send', mail, send: {} }];
  const bounce = (list: string[], subType: string, diagnosticCode: string) => ({
    eventType: 'Bounce',
    mail,
    bounce: {
      feedbackId: `${randomUUID()}-000000`,
      bounceType: 'Permanent',
      bounceSubType: subType,
      bouncedRecipients: list.map((emailAddress) => ({
        emailAddress,
        action: 'failed',
        status: '5.1.1',
        diagnosticCode,
      })),
      timestamp: at(40),
      reportingMTA: 'dns; local.smtp-out.amazonses.com',
    },
  });
  if (delivered.length > 0) {
    events.push({
      eventType: 'Delivery',
      mail,
      delivery: {
        timestamp: at(30),
        processingTimeMillis: 30,
        recipients: delivered,
        smtpResponse: '250 2.6.0 Message received',
        reportingMTA: 'local.smtp-out.amazonses.com',
        remoteMtaIp: '127.0.0.1',
      },
    });
  }
  if (byOutcome('bounce').length > 0) {
    events.push(bounce(byOutcome('bounce'), 'General', 'smtp; 550 5.1.1 user unknown'));
  }
  if (byOutcome('suppressed').length > 0) {
    events.push(
      bounce(
        byOutcome('suppressed'),
        'OnAccountSuppressionList',
        'Amazon SES did not send the message to this address because it is on the suppression list for your account.',
      ),
    );
  }
  const complained = byOutcome('complaint');
  if (complained.length > 0) {
    events.push({
      eventType: 'Complaint',
      mail,
      complaint: {
        feedbackId: `${randomUUID()}-000000`,
        complaintSubType: null,
        complainedRecipients: complained.map((emailAddress) => ({ emailAddress })),
        timestamp: at(60),
        userAgent: 'Amazon SES Mailbox Simulator',
        complaintFeedbackType: 'abuse',
        arrivalDate: at(60),
      },
    });
  }
  return events;
}

/** Starts the layer on 127.0.0.1. */
export async function startSesFront(options: SesFrontOptions): Promise<SesFront> {
  const sets = new Map<string, Map<string, Destination>>();
  const tenants = new LocalTenants();
  const sns = new SNSClient({ ...emulatorConfig(options.snsEndpoint), maxAttempts: 5 });
  const bus = new LocalEventBus(options.snsEndpoint);
  const pending = new Set<Promise<void>>();
  const held: (() => Promise<void>)[] = [];
  let holding = options.holdEvents;
  let published = 0;

  function track(work: Promise<void>): void {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  }

  async function publishAll(destinations: Destination[], events: Record<string, unknown>[]): Promise<void> {
    for (const event of events) {
      const type = Object.entries(SES_EVENT_TYPES).find(([, name]) => name === event.eventType)?.[0] as MatchingType;
      for (const destination of destinations) {
        if (!destination.enabled || !destination.types.has(type)) continue;
        try {
          if ('topicArn' in destination.target) {
            await sns.send(
              new PublishCommand({ TopicArn: destination.target.topicArn, Message: JSON.stringify(event) }),
            );
          } else {
            await bus.put(eventBridgeEnvelope(event));
          }
          published += 1;
        } catch (error) {
          options.onPublishError?.(error);
        }
      }
    }
  }

  async function sendEmail(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> {
    const send = json<SendEmailBody>(body) ?? {};
    // Attachments and headers as SES checks them (aws-ses-v2-local stores them unchecked).
    const refused = contentRefusal(send as SendContent, body.length);
    if (refused) {
      sesError(res, refused.status, refused.type, refused.message);
      return;
    }
    const setName = send.ConfigurationSetName;
    const set = setName ? sets.get(setName) : undefined;
    if (setName && !set) {
      sesError(res, 404, 'NotFoundException', `Configuration set <${setName}> does not exist.`);
      return;
    }
    const forTenant = tenants.refusal(send);
    if (forTenant) {
      sesError(res, forTenant.status, forTenant.type, forTenant.message);
      return;
    }
    const acceptedAt = Date.now();
    const reply = await forward(options.upstream, req, body);
    relay(res, reply);
    const messageId = json<{ MessageId?: string }>(reply.body)?.MessageId;
    if (messageId && reply.status >= 200 && reply.status < 300) tenants.record(messageId, send.TenantName);
    if (reply.status < 200 || reply.status >= 300 || !messageId || !set || !setName) return;
    const events = sesEventsFor(send, messageId, setName, acceptedAt, callerIdentityOf(req.headers.authorization));
    const destinations = [...set.values()];
    const tags = Object.fromEntries((send.EmailTags ?? []).map((t) => [t.Name ?? '', t.Value ?? '']));
    const publish = () => publishAll(destinations, events);
    if (holding?.(tags)) held.push(publish);
    else track(publish());
  }

  function configurationSets(
    res: http.ServerResponse,
    method: string,
    parts: readonly string[],
    body: Buffer,
  ): boolean {
    // /v2/email/configuration-sets[/{name}[/event-destinations]]
    const [name, sub] = [parts[0] ? decodeURIComponent(parts[0]) : undefined, parts[1]];
    if (method === 'POST' && name === undefined) {
      const input = json<{ ConfigurationSetName?: string }>(body);
      const setName = input?.ConfigurationSetName;
      if (!setName || !/^[A-Za-z0-9_-]{1,64}$/.test(setName)) {
        sesError(res, 400, 'BadRequestException', 'ConfigurationSetName must be 1-64 letters, digits, _ or -.');
      } else if (sets.has(setName)) {
        sesError(res, 400, 'AlreadyExistsException', `Configuration set <${setName}> already exists.`);
      } else {
        sets.set(setName, new Map());
        answer(res, 200, {});
      }
      return true;
    }
    if (name === undefined) return false;
    const set = sets.get(name);
    if (method === 'GET' && sub === undefined) {
      if (set) answer(res, 200, { ConfigurationSetName: name });
      else sesError(res, 404, 'NotFoundException', `Configuration set <${name}> does not exist.`);
      return true;
    }
    if (method === 'POST' && sub === 'event-destinations') {
      if (!set) {
        sesError(res, 404, 'NotFoundException', `Configuration set <${name}> does not exist.`);
        return true;
      }
      const input = json<{
        EventDestinationName?: string;
        EventDestination?: {
          Enabled?: boolean;
          MatchingEventTypes?: string[];
          SnsDestination?: { TopicArn?: string };
          EventBridgeDestination?: { EventBusArn?: string };
        };
      }>(body);
      const destinationName = input?.EventDestinationName;
      const topicArn = input?.EventDestination?.SnsDestination?.TopicArn;
      const busArn = input?.EventDestination?.EventBridgeDestination?.EventBusArn;
      const types = (input?.EventDestination?.MatchingEventTypes ?? []).filter(
        (t): t is MatchingType => t in SES_EVENT_TYPES,
      );
      if (!destinationName) sesError(res, 400, 'BadRequestException', 'EventDestinationName is required.');
      else if (busArn !== undefined && busArn !== LOCAL_DEFAULT_BUS_ARN) {
        sesError(
          res,
          400,
          'BadRequestException',
          `Only the default event bus is supported (${LOCAL_DEFAULT_BUS_ARN}).`,
        );
      } else if (!topicArn && !busArn) {
        sesError(res, 400, 'BadRequestException', 'An EventBridgeDestination or an SnsDestination is required.');
      } else if (types.length === 0) {
        sesError(res, 400, 'BadRequestException', 'MatchingEventTypes must name at least one supported event type.');
      } else if (set.has(destinationName)) {
        sesError(res, 400, 'AlreadyExistsException', `Event destination <${destinationName}> already exists.`);
      } else {
        set.set(destinationName, {
          name: destinationName,
          enabled: input?.EventDestination?.Enabled ?? false,
          types: new Set(types),
          target: busArn ? { eventBus: 'default' } : { topicArn: topicArn ?? '' },
        });
        answer(res, 200, {});
      }
      return true;
    }
    return false;
  }

  const server = http.createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://local');
      const method = req.method ?? 'GET';
      if (method === 'POST' && url.pathname === '/v2/email/outbound-emails') {
        await sendEmail(req, res, body);
        return;
      }
      if (method === 'POST' && url.pathname === '/local/eventbridge/rules') {
        const rule = json<{ Name?: string; EventPattern?: Record<string, never>; QueueUrl?: string }>(body);
        if (!rule?.Name || !rule.EventPattern || !rule.QueueUrl) {
          answer(res, 400, { message: 'Name, EventPattern and QueueUrl are required' }, 'ValidationException');
        } else {
          bus.putRule({ name: rule.Name, pattern: rule.EventPattern, queueUrl: rule.QueueUrl });
          answer(res, 200, { RuleArn: LOCAL_DEFAULT_BUS_ARN.replace('event-bus/default', `rule/${rule.Name}`) });
        }
        return;
      }
      const tenantAnswer = tenants.handle(method, url.pathname, json<Record<string, unknown>>(body));
      if (tenantAnswer) {
        if ('ok' in tenantAnswer) answer(res, 200, tenantAnswer.body ?? {});
        else sesError(res, tenantAnswer.status, tenantAnswer.type, tenantAnswer.message);
        return;
      }
      const prefix = '/v2/email/configuration-sets';
      if (url.pathname === prefix || url.pathname.startsWith(`${prefix}/`)) {
        const parts = url.pathname.slice(prefix.length).split('/').filter(Boolean);
        if (configurationSets(res, method, parts, body)) return;
      }
      const reply = await forward(options.upstream, req, body);
      // The mailbox page, with each email's custom headers shown.
      if (method === 'GET' && url.pathname === '/')
        relay(res, { ...reply, body: Buffer.from(withHeadersShown(reply.body.toString('utf8'))) });
      // The mailbox, with the tenant each email was sent for.
      else if (method === 'GET' && url.pathname === '/store' && reply.status === 200)
        relay(res, { ...reply, body: Buffer.from(tenants.withTenants(reply.body.toString('utf8'))) });
      else relay(res, reply);
    })().catch((error: unknown) => {
      sesError(
        res,
        502,
        'InternalFailure',
        `local SES front: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  });
  // Idle client connections stay open well past the SDK's reuse of them (as SES's endpoints do),
  // so a send never goes out on a connection the server is closing; stop() closes them all.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let stopping: Promise<void> | undefined;
  const front: SesFront = {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    get published() {
      return published;
    },
    idle: async () => {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    release: async () => {
      holding = undefined;
      for (const publish of held.splice(0)) track(publish());
      await front.idle();
    },
    stop: () => {
      stopping ??= (async () => {
        // Events still being published get a moment (fauxqs may already be gone).
        await Promise.race([front.idle(), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        sns.destroy();
        bus.destroy();
      })();
      return stopping;
    },
  };
  return front;
}
