/**
 * Put in place of `@smithy/core/event-streams` in every Lambda bundle (lib/construct/bundling.ts).
 * The SDK loads that module only when an operation streams events (a dynamic import in
 * @smithy/core's HttpProtocol), and no function of the pipeline calls one: SendEmail, the
 * DynamoDB item operations and SendMessage do not stream. Bundled anyway, its 20 KB are parsed at
 * every cold start (BENCHMARKS.md, section 4). Should an event-stream operation ever be called,
 * it fails here, naming why, instead of misbehaving.
 */

const WHY =
  'event streams are not bundled in the pipeline functions (lambdas/runtime/no-event-streams.ts): ' +
  'remove the alias in lib/construct/bundling.ts to call an event-stream operation';

/** Stands for the SDK's event-stream serde: it cannot be built. */
export class EventStreamSerde {
  constructor() {
    throw new Error(WHY);
  }
}

/** Stands for the SDK's event-stream marshaller provider: it cannot provide one. */
export function eventStreamSerdeProvider(): never {
  throw new Error(WHY);
}
