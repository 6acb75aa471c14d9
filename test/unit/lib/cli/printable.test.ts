/**
 * What the operator CLI prints never carries a control or text-direction character raw
 * (lib/cli/printable.ts): keys, field names, reasons and bounce details come from outside, and a
 * terminal obeys escape sequences in them.
 */
import type { Command } from '../../../../lib/cli/command';
import { run, runCommand } from '../../../../lib/cli/main';
import { printable, printableIo, printableLines } from '../../../../lib/cli/printable';
import { formatDeadLetter, type DeadLetter } from '../../../../lib/dlq/dead-letters';
import { formatReport } from '../../../../lib/cli/status-report';
import { formatDecision } from '../../../../tools/dev/local/format';
import { capture } from '../../helpers';

/** Every character a terminal could act on, or that reorders or hides text. */
const RAW =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|[\ud800-\udfff]/u;

/** A key an attacker could publish: clears the screen, then writes a fake line in red (C1 CSI too). */
const HOSTILE = 'order-42\u001b[2J\u001b[31mOK\u009b0m\u202eexe.pdf';

describe('printable', () => {
  test('escape sequences, C1 controls and text-direction overrides are written as \\uXXXX', () => {
    expect(printable(HOSTILE)).toBe('order-42\\u001b[2J\\u001b[31mOK\\u009b0m\\u202eexe.pdf');
  });

  test('line breaks and tabs in a value are escaped too: a value cannot start a line of its own', () => {
    expect(printable('a\nb\r\tc\u2028d')).toBe('a\\u000ab\\u000d\\u0009c\\u2028d');
  });

  test('a lone surrogate is escaped; a pair (an emoji) is kept', () => {
    expect(printable('x\ud800y 👋')).toBe('x\\ud800y 👋');
  });

  test('text in any script, accents and joined emoji are kept as they are', () => {
    const text = 'Grüße, 東京, مرحبا, 👩\u200d💻';

    expect(printable(text)).toBe(text);
  });

  test('printableLines keeps the line breaks between lines and escapes the rest', () => {
    expect(printableLines('first\u001b[1A\nsecond')).toBe('first\\u001b[1A\nsecond');
  });

  test('a line of JSON output with C1 controls and text-direction characters stays valid JSON with the same value', () => {
    const value = { key: HOSTILE, reason: 'bidi \u2066x\u2069 and \u0085' };
    const line = printableLines(JSON.stringify(value));

    expect(line).not.toMatch(RAW);
    expect(JSON.parse(line)).toEqual(value);
  });

  test('printableIo passes every line it is given through printableLines', () => {
    const out: string[] = [];
    const io = printableIo({ out: (l) => out.push(l), err: (l) => out.push(l) });

    io.out(HOSTILE);
    io.err(HOSTILE);

    expect(out).toEqual([printable(HOSTILE), printable(HOSTILE)]);
  });
});

describe('dlq list', () => {
  const letter: DeadLetter = {
    messageId: 'm-1',
    ageSeconds: 9,
    errorClass: 'permanent',
    errorCode: 'InvalidMessage\u001b]0;owned\u0007',
    reason: `${HOSTILE}: is not a known field (allowed: to, cc)`,
    dedupeKey: `${HOSTILE}\nfake line`,
    recipient: 'a***@example.com',
  };

  test('a line names the key, code and reason escaped, and stays one line', () => {
    const line = formatDeadLetter(letter);

    expect(line).not.toMatch(RAW);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain(`key=${printable(`${HOSTILE}\nfake line`)}`);
    expect(line).toContain(printable(letter.reason));
    expect(line).toContain('InvalidMessage\\u001b]0;owned\\u0007');
  });
});

describe('status', () => {
  test('the key, SES ids, event types and bounce details are escaped, one line each', () => {
    const text = formatReport({
      key: HOSTILE,
      status: 'bounced',
      sesMessageId: 'ses-1\u001b[8m',
      events: [
        { type: 'Send', at: '2026-12-01T10:00:00.000Z', sesMessageId: 'ses-1' },
        { type: 'Bounce\u202e', at: '2026-12-01T10:00:01.000Z', detail: 'Permanent/General\n    2026-12-01  Delivery' },
      ],
      updatedAt: '2026-12-01T10:00:01.000Z',
    });

    expect(text).not.toMatch(RAW);
    expect(text.split('\n')).toHaveLength(6);
    expect(text).toContain(`${printable(HOSTILE)}: bounced`);
    expect(text).toContain('Bounce\\u202e  Permanent/General\\u000a    2026-12-01  Delivery');
  });
});

describe('npm start', () => {
  test('a decision line shows the key and the reason escaped, on one line', () => {
    const line = formatDecision({
      consumer: 'pod-1',
      decision: 'dead-lettered',
      dedupeKey: HOSTILE,
      errorCode: 'InvalidMessage',
      reason: `${HOSTILE}\nfake: is not a known field`,
    });

    expect(line).not.toMatch(RAW);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain(`key=${printable(HOSTILE)}`);
  });
});

describe('the commands', () => {
  test('an error that echoes an argument prints it escaped, on one line', async () => {
    const { err, io } = capture();

    const code = await run([`${HOSTILE}\nemail-pipeline: all good`], io);

    expect(code).toBe(2);
    expect(err[0]).toBe(`email-pipeline: unknown command "${printable(`${HOSTILE}\nemail-pipeline: all good`)}"`);
    expect(err.join('\n')).not.toMatch(RAW);
  });

  test('whatever a command writes to stdout or stderr reaches the terminal escaped', async () => {
    const { out, err, io } = capture();
    const echo: Command = {
      name: 'echo',
      summary: 'test',
      usage: 'echo',
      run: async (_argv, commandIo) => {
        commandIo.out(HOSTILE);
        commandIo.err(HOSTILE);
      },
    };

    expect(await runCommand(echo, [], io)).toBe(0);
    expect([...out, ...err]).toEqual([printable(HOSTILE), printable(HOSTILE)]);
  });

  test('a failure whose message carries control characters (an AWS error, say) is printed escaped', async () => {
    const { err, io } = capture();
    const failing: Command = {
      name: 'fail',
      summary: 'test',
      usage: 'fail',
      run: () => Promise.reject(new Error(`AccessDenied for ${HOSTILE}`)),
    };

    expect(await runCommand(failing, [], io)).toBe(1);
    expect(err).toEqual([`fail: Error: AccessDenied for ${printable(HOSTILE)}`]);
  });
});
