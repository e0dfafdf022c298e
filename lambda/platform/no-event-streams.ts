/**
 * Bundling only (lib/bundling.ts aliases `@smithy/core/event-streams` to this file). The SDK's HTTP
 * protocol loads its event-stream codec with a dynamic `import()` when an operation streams events;
 * esbuild without code splitting inlines that import, so the codec (about 20 KB of the bundle) rode
 * along although neither DynamoDB nor Secrets Manager has such an operation. Should one ever be
 * called, it fails here by name instead of somewhere inside the SDK.
 */
const unavailable = (): never => {
  throw new Error('AWS SDK event streams are not part of this bundle (lambda/platform/no-event-streams.ts)');
};

export class EventStreamSerde {
  constructor() {
    unavailable();
  }
}

export const eventStreamSerdeProvider = unavailable;
