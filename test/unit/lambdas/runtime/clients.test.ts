/** The handler's clients that only failure paths use are built on their first send (clients.ts). */
import { builtOnFirstSend } from '../../../../lambdas/runtime/clients';

interface FakeClient {
  send(command: string): Promise<string>;
}

test('a client built on first send is not built until a command is sent, then built once', async () => {
  const built: FakeClient[] = [];
  const client = builtOnFirstSend<FakeClient>(() => {
    const made: FakeClient = { send: (command) => Promise.resolve(`${built.indexOf(made)}:${command}`) };
    built.push(made);
    return made;
  });

  expect(built).toHaveLength(0);
  await expect(client.send('first' as never)).resolves.toBe('0:first');
  await expect(client.send('second' as never)).resolves.toBe('0:second');
  expect(built).toHaveLength(1);
});
