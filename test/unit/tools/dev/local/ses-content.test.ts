/**
 * The local SES layer's checks of attachments and headers (tools/dev/local/ses-content.ts), as SES
 * makes them before aws-ses-v2-local stores a send, and the mailbox page showing headers.
 */
import { contentRefusal, SES_MAX_MESSAGE_BYTES, withHeadersShown } from '../../../../../tools/dev/local/ses-content';

const simple = (part: object) => ({ Content: { Simple: part } });

test('a send with a few headers and a PDF is taken', () => {
  const send = simple({
    Headers: [{ Name: 'List-Unsubscribe-Post', Value: 'List-Unsubscribe=One-Click' }],
    Attachments: [{ FileName: 'a.pdf', RawContent: 'eA==' }],
  });
  expect(contentRefusal(send, 1000)).toBeUndefined();
});

test('more than 15 headers, or a header name with a colon, is a BadRequestException', () => {
  const many = Array.from({ length: 16 }, (_, i) => ({ Name: `X-${i}`, Value: 'v' }));
  expect(contentRefusal(simple({ Headers: many }), 1000)?.type).toBe('BadRequestException');
  expect(contentRefusal({ Content: { Template: { Headers: [{ Name: 'X:A', Value: 'v' }] } } }, 1000)?.type).toBe(
    'BadRequestException',
  );
});

test('a file type SES refuses is MessageRejected', () => {
  expect(contentRefusal(simple({ Attachments: [{ FileName: 'run.BAT' }] }), 1000)).toMatchObject({
    status: 400,
    type: 'MessageRejected',
  });
});

test('a message over 40 MB is MessageRejected', () => {
  expect(contentRefusal(simple({}), SES_MAX_MESSAGE_BYTES + 1)?.type).toBe('MessageRejected');
});

test('the mailbox page shows headers before the attachments, and is left as it is if its markup changed', () => {
  const page = '<p>${e.attachments.length ? `x` : ``}</p>';
  expect(withHeadersShown(page)).toContain('<b>Headers:</b>');
  expect(withHeadersShown('<p>other</p>')).toBe('<p>other</p>');
});
