/**
 * The send stage's SES v2 request: building the SendEmail input, and the SDK retry policy
 * that never repeats a send SES may already have accepted (the failure classes are in
 * classify.ts).
 */
import {
  DEDUPE_ATTEMPT_TAG,
  DEDUPE_CLAIM_TAG,
  DEDUPE_TEAM_KEY_TAG,
  DEDUPE_TEAM_TAG,
  keyTeam,
} from '../../kernel/ledger/binding';
import { ledgerKey } from '../../kernel/ledger/schema';
import { SESv2Client, type Attachment, type SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { httpHandler } from '../../runtime/clients';
import type { RetryErrorInfo, RetryStrategyV2, RetryToken } from '@smithy/types';
import { formatDisplayName } from '../../kernel/contract/address';
import { isDailyQuota, provesNotSent, shape } from '../classify';
import type { EmailMessage } from '../../kernel/contract';
import { teamOfKey, tenantOfKey, type TeamRoutes } from '../../kernel/teams';

/** The SES message tag that carries the dedupe key (searchable in SES event destinations). */
export const DEDUPE_TAG = 'dedupe-key';

export interface SenderSettings {
  readonly senderAddress: string;
  /** Display name of the From address; quoted or RFC 2047-encoded as SES requires. */
  readonly senderName?: string;
  readonly configurationSetName?: string;
  /** The teams: a team's key (`<team>#<key>`) is sent under its team's SES tenant, if it has one. */
  readonly teams?: TeamRoutes;
}

/**
 * SES tag values allow only letters, digits, `_` and `-` (256 at most). A key
 * outside that alphabet, or one that starts with `sha256-` itself, is tagged by
 * its SHA-256 instead, prefixed `sha256-` (ledgerKey: one tag value per key).
 */
export function dedupeTagValue(key: string): string {
  return ledgerKey(key);
}

/** What binds a send's SES events to it: its attempt id and its claim (lambdas/kernel/ledger/binding.ts). */
export interface AttemptTags {
  readonly attemptId: string;
  readonly claimRef: string;
}

/**
 * Builds the SendEmail request for one validated email; `attachments` are its files as SES parts
 * (send/attachments.ts reads them), on simple and template content alike, as are its headers.
 */
export function buildSendEmailInput(
  email: EmailMessage,
  sender: SenderSettings,
  key: string,
  attempt?: AttemptTags,
  attachments?: Attachment[],
): SendEmailCommandInput {
  const tenant = tenantOfKey(sender.teams, key);
  const tagged = keyTeam(teamOfKey(sender.teams === undefined ? undefined : Object.keys(sender.teams), key), key);
  // Contract v1.2: custom headers and attachments, on whichever content the email has.
  const extras = {
    ...(email.headers ? { Headers: Object.entries(email.headers).map(([Name, Value]) => ({ Name, Value })) } : {}),
    ...(attachments?.length ? { Attachments: attachments } : {}),
  };
  const content: SendEmailCommandInput['Content'] = email.template
    ? {
        Template: {
          TemplateName: email.template.name,
          TemplateData: JSON.stringify(email.template.data),
          ...extras,
        },
      }
    : {
        Simple: {
          Subject: { Data: email.subject ?? '', Charset: 'UTF-8' },
          Body: {
            ...(email.text !== undefined ? { Text: { Data: email.text, Charset: 'UTF-8' } } : {}),
            ...(email.html !== undefined ? { Html: { Data: email.html, Charset: 'UTF-8' } } : {}),
          },
          ...extras,
        },
      };
  return {
    // v1.3: a team's sender (checked at parse) is sent bare; the pipeline's own keeps senderName.
    FromEmailAddress:
      email.from !== undefined && email.from !== sender.senderAddress
        ? email.from
        : sender.senderName
          ? `${formatDisplayName(sender.senderName)} <${sender.senderAddress}>`
          : sender.senderAddress,
    Destination: {
      ToAddresses: [...email.to],
      ...(email.cc.length ? { CcAddresses: [...email.cc] } : {}),
      ...(email.bcc.length ? { BccAddresses: [...email.bcc] } : {}),
    },
    ...(email.replyTo.length ? { ReplyToAddresses: [...email.replyTo] } : {}),
    Content: content,
    EmailTags: [
      { Name: DEDUPE_TAG, Value: dedupeTagValue(key) },
      ...(attempt
        ? [
            { Name: DEDUPE_ATTEMPT_TAG, Value: attempt.attemptId },
            { Name: DEDUPE_CLAIM_TAG, Value: attempt.claimRef },
          ]
        : []),
      // A team's key is tagged with a hash: its team travels beside it, for the ledger to name.
      ...(tagged !== undefined ? [{ Name: DEDUPE_TEAM_TAG, Value: tagged.team }] : []),
      // ...and its own key, when SES takes it as a tag value: status changes and callbacks name it.
      ...(tagged?.teamKey !== undefined ? [{ Name: DEDUPE_TEAM_KEY_TAG, Value: tagged.teamKey }] : []),
      ...Object.entries(email.tags).map(([Name, Value]) => ({ Name, Value })),
    ],
    ...(sender.configurationSetName ? { ConfigurationSetName: sender.configurationSetName } : {}),
    // A team with an SES tenant sends as that tenant: its reputation, and a pause, are the team's own.
    ...(tenant !== undefined ? { TenantName: tenant } : {}),
  };
}

// ---------------------------------------------------------------- SDK retries

/**
 * The SES client's retry policy: retry throttling and failures that prove the
 * request never reached SES; never retry timeouts, resets or 5xx, since SES
 * has no idempotency token and a blind retry could send the email twice.
 */
export class SafeSesRetryStrategy implements RetryStrategyV2 {
  constructor(
    private readonly maxAttempts = 3,
    private readonly baseDelayMs = 100,
    private readonly random: () => number = Math.random,
  ) {}

  async acquireInitialRetryToken(): Promise<RetryToken> {
    return this.token(0);
  }

  async refreshRetryTokenForRetry(token: RetryToken, errorInfo: RetryErrorInfo): Promise<RetryToken> {
    const attempt = token.getRetryCount() + 1;
    if (attempt >= this.maxAttempts || !SafeSesRetryStrategy.isSafeToRetry(errorInfo)) {
      throw new Error('No retry: not safe or attempts used up');
    }
    return this.token(attempt);
  }

  recordSuccess(): void {}

  static isSafeToRetry(errorInfo: RetryErrorInfo): boolean {
    if (errorInfo.errorType === 'THROTTLING') return !isDailyQuota(shape(errorInfo.error));
    return provesNotSent(errorInfo.error);
  }

  private token(retryCount: number): RetryToken {
    const cap = this.baseDelayMs * 2 ** retryCount;
    const delay = retryCount === 0 ? 0 : Math.round(cap / 2 + (this.random() * cap) / 2);
    return { getRetryCount: () => retryCount, getRetryDelay: () => delay };
  }
}

/** SES v2, with no blind retries: SES has no idempotency token (see SafeSesRetryStrategy). */
export function createSesClient(requestTimeoutMs: number): SESv2Client {
  return new SESv2Client({ requestHandler: httpHandler(requestTimeoutMs), retryStrategy: new SafeSesRetryStrategy() });
}
