/**
 * What the callbacks command reads and sends, against clients that answer in this process: replay
 * messages SQS fails are sent again and, failing three times, reported with how many went; the
 * items of a --team replay are read in full, keys DynamoDB leaves unprocessed asked again; Query
 * pages are followed; a redrive keeps every attribute but the function's diagnosis.
 */
import {
  callbacksOfKey,
  callbacksSince,
  enableCallback,
  redriveCallbacks,
  sendReplays,
} from '../../../../lib/cli/callback-store';

interface Sent {
  readonly name: string;
  readonly input: Record<string, unknown>;
}

function client(answer: (command: Sent) => unknown): { client: never; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    client: {
      send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        const s = { name: command.constructor.name, input: command.input };
        sent.push(s);
        return answer(s);
      },
    } as never,
  };
}

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ key: 'k', id: `msg_${i}`, state: 'delivered' }));

test('entries SQS fails are sent again; what still fails is reported with how many were sent', async () => {
  let first = true;
  const flaky = client((c) => {
    const entries = c.input.Entries as { Id: string }[];
    if (first) {
      first = false;
      return { Successful: entries.slice(1).map((e) => ({ Id: e.Id })), Failed: [{ Id: entries[0]?.Id }] };
    }
    return { Successful: entries.map((e) => ({ Id: e.Id })) };
  });
  expect(await sendReplays(flaky.client, 'q', rows(12), 'r')).toBe(12);
  expect(flaky.sent.map((s) => (s.input.Entries as unknown[]).length)).toEqual([10, 1, 2]);

  const refusing = client((c) => ({
    Failed: (c.input.Entries as { Id: string }[]).map((e) => ({
      Id: e.Id,
      Code: 'KmsThrottled',
      Message: 'slow down',
    })),
  }));
  await expect(sendReplays(refusing.client, 'q', rows(3), 'r')).rejects.toThrow(
    'Sent 0 of 3 replay message(s) (replay r); SQS refused the others: KmsThrottled slow down.',
  );
  expect(refusing.sent).toHaveLength(3);
});

test("a key's callbacks follow the Query's pages, oldest first", async () => {
  const db = client((c) =>
    c.input.ExclusiveStartKey === undefined
      ? { Items: [{ key: 'k', id: 'b', at: '2026-12-04T09:00:00Z' }], LastEvaluatedKey: { key: 'k', id: 'b' } }
      : { Items: [{ key: 'k', id: 'a', at: '2026-12-04T08:00:00Z' }] },
  );
  expect((await callbacksOfKey(db.client, 't', 'k')).map((r) => r.id)).toEqual(['a', 'b']);
  expect(db.sent[0]?.input).toMatchObject({ ConsistentRead: true });
});

test('a --team replay since a time reads the items in full, asking again for unprocessed keys', async () => {
  let unprocessed = true;
  const db = client((c) => {
    if (c.name === 'QueryCommand') {
      return {
        Items: [
          { key: 'k1', id: 'i1', at: '2026-12-04T09:00:00Z' },
          { key: 'k2', id: 'i2', at: '2026-12-04T09:30:00Z' },
        ],
      };
    }
    const keys = (c.input.RequestItems as Record<string, { Keys: { key: string; id: string }[] }>).t?.Keys ?? [];
    if (unprocessed) {
      unprocessed = false;
      return { Responses: { t: [{ ...keys[0], team: 'billing' }] }, UnprocessedKeys: { t: { Keys: keys.slice(1) } } };
    }
    return { Responses: { t: keys.map((k) => ({ ...k, team: 'sales' })) } };
  });
  const now = Date.parse('2026-12-04T10:00:00Z');
  const found = await callbacksSince(db.client, 't', '2026-12-04T08:00:00.000Z', { team: 'billing', now });
  expect(found.map((r) => r.id)).toEqual(['i1']);
  expect(db.sent.map((s) => s.name)).toEqual(['QueryCommand', 'BatchGetCommand', 'BatchGetCommand']);
});

test('a redrive keeps every attribute but the reason and the first try', async () => {
  let received = false;
  const string = (value: string) => ({ DataType: 'String', StringValue: value });
  const sqs = client((c) => {
    if (c.name !== 'ReceiveMessageCommand' || received) return {};
    received = true;
    return {
      Messages: [
        {
          ReceiptHandle: 'r',
          Body: '{"replayOf":{"key":"k","id":"i"}}',
          MessageAttributes: {
            'callback-replay': string('run'),
            'callback-failure': string('HTTP 404'),
            'callback-first-try': string('2026-12-04T09:00:00Z'),
          },
        },
      ],
    };
  });
  expect(await redriveCallbacks(sqs.client, { dlqUrl: 'dlq', sourceQueueUrl: 'q' }, {})).toEqual({
    scanned: 1,
    moved: 1,
  });
  expect(sqs.sent.find((s) => s.name === 'SendMessageCommand')?.input).toEqual({
    QueueUrl: 'q',
    MessageBody: '{"replayOf":{"key":"k","id":"i"}}',
    MessageAttributes: { 'callback-replay': string('run') },
  });
});

test('enabling a callback that was not disabled says so (no disabledAt)', async () => {
  expect(await enableCallback(client(() => ({})).client, 't', undefined)).toBeUndefined();
  expect(await enableCallback(client(() => ({ Attributes: { key: 'x' } })).client, 't', 'billing')).toBeUndefined();
  expect(await enableCallback(client(() => ({ Attributes: { disabledAt: 'then' } })).client, 't', 'billing')).toEqual({
    disabledAt: 'then',
  });
});
