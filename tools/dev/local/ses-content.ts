/**
 * What the local SES layer (ses-front.ts) checks of a SendEmail's attachments and headers, as SES
 * does before aws-ses-v2-local (which takes and stores both, unchecked) sees them: at most 15
 * headers, each a printable-ASCII name without a colon (126 at most) and a printable value; no
 * file type SES refuses; the whole message within 40 MB. And the mailbox page with each email's
 * headers shown next to its attachments (aws-ses-v2-local's page shows attachments only).
 */
import { SES_BLOCKED_EXTENSIONS } from '../../../lambdas/kernel/contract';

/** SES's limit on a whole message, in bytes (attachments are counted base64-encoded, as sent). */
export const SES_MAX_MESSAGE_BYTES = 40 * 1000 * 1000;
const SES_MAX_HEADERS = 15;

interface Part {
  readonly Headers?: readonly { Name?: string; Value?: string }[];
  readonly Attachments?: readonly { FileName?: string; RawContent?: string }[];
}

/** A SendEmail body's content, as far as these checks read it. */
export interface SendContent {
  readonly Content?: { readonly Simple?: Part; readonly Template?: Part };
}

/** SES's refusal of a request, or undefined when it would take it. */
export interface Refusal {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

export function contentRefusal(send: SendContent, requestBytes: number): Refusal | undefined {
  const part = send.Content?.Simple ?? send.Content?.Template;
  const headers = part?.Headers ?? [];
  if (headers.length > SES_MAX_HEADERS) {
    return { status: 400, type: 'BadRequestException', message: `Too many headers: at most ${SES_MAX_HEADERS}.` };
  }
  for (const { Name = '', Value = '' } of headers) {
    if (!/^[!-9;-~]{1,126}$/.test(Name) || !/^[ -~]*$/.test(Value)) {
      return { status: 400, type: 'BadRequestException', message: `Invalid header: ${JSON.stringify(Name)}.` };
    }
  }
  for (const { FileName = '' } of part?.Attachments ?? []) {
    const extension = FileName.includes('.') ? FileName.slice(FileName.lastIndexOf('.') + 1).toLowerCase() : '';
    if (SES_BLOCKED_EXTENSIONS.includes(extension)) {
      return {
        status: 400,
        type: 'MessageRejected',
        message: `Attachment type not supported: ${JSON.stringify(FileName)}.`,
      };
    }
  }
  if (requestBytes > SES_MAX_MESSAGE_BYTES) {
    return { status: 400, type: 'MessageRejected', message: 'Message length is more than 40 MB.' };
  }
  return undefined;
}

/** The line of aws-ses-v2-local's page that lists an email's attachments; headers are shown before it. */
const ATTACHMENTS_LINE = '${e.attachments.length ?';
const HEADERS_LINE =
  "${(e.headers ?? []).length ? `<p><b>Headers:</b> ${e.headers.map(h => escape(h.name + ': ' + h.value)).join('<br>')}</p>` : ''}\n                    ";

/** The mailbox page with each email's custom headers shown; the page as it is if its markup changed. */
export function withHeadersShown(page: string): string {
  return page.includes(ATTACHMENTS_LINE) ? page.replace(ATTACHMENTS_LINE, `${HEADERS_LINE}${ATTACHMENTS_LINE}`) : page;
}
