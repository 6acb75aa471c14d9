/**
 * The stub in place of the SDK's event-stream code: what HttpProtocol would load for an
 * event-stream operation fails, naming where the alias is, instead of misbehaving.
 */
import { EventStreamSerde, eventStreamSerdeProvider } from '../../../../lambdas/runtime/no-event-streams';

test('the event-stream serde cannot be built, and says why', () => {
  expect(() => new EventStreamSerde()).toThrow(/event streams are not bundled.*lib\/construct\/bundling\.ts/);
});

test('the event-stream marshaller provider provides nothing, and says why', () => {
  expect(() => eventStreamSerdeProvider()).toThrow(/event streams are not bundled/);
});
