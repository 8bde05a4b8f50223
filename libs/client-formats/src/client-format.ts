import type { TSchema } from 'typebox';
import type { CanonicalResponse } from '@gateway/canonical';
import type { ParsedClientRequest, ParseOptions } from './common/parse-common';
import type { RenderContext } from './common/render-common';
import type { StreamEncoder } from './common/stream-encoder';
import type { WireError } from './common/wire-error';
import type { ResolvedRequest, StoredConversation, StoredReferences } from './responses/stored-state';

/** A format whose API keeps replies server-side (responses): how a request refers to them. */
export interface StoredStateRules {
  /** The id the reply gets (and is stored under), from the gateway's unique request id. */
  responseId(requestId: string): string;
  /** What the body refers to in the store; throws a `DomainError` naming a malformed reference. */
  references(body: unknown): StoredReferences;
  /** The body with the references replaced by what they name (a missing item is a 404), and the input items to store. */
  resolve(body: unknown, previous: StoredConversation | undefined, items: Record<string, Record<string, unknown>>, requestId: string): ResolvedRequest;
}

/**
 * One client wire format (chat completions, responses, messages): the client-side mirror of the
 * router's `ProviderAdapter`. Everything a format spells lives in its folder and is reached
 * through this object, so adding a format is one folder plus one line in `registry.ts`.
 */
export interface ClientFormat {
  /** The JSON Schema of a request body: what `parse` validates with, and what `/v1/openapi.json` publishes. */
  requestSchema: TSchema;
  /** Validates a request body and converts it; throws a `DomainError` (400, `param` = field path) on the first problem. */
  parse(body: unknown, options: ParseOptions): ParsedClientRequest;
  /** The whole (non-streaming) reply body. */
  render(response: CanonicalResponse, context: RenderContext): object;
  /** One encoder per streamed reply; it keeps the stream's state (ids, sequence numbers). */
  createStreamEncoder(context: RenderContext): StreamEncoder;
  /** The JSON body of a failed request; a 5xx carries `request_id`. */
  errorBody(error: WireError, requestId?: string): Record<string, unknown>;
  /**
   * The SSE frame that ends a stream whose headers were already sent. `sequenceNumber` continues a
   * responses stream's numbering; an encoder's own `error()` does that by itself.
   */
  streamErrorFrame(error: WireError, requestId?: string, sequenceNumber?: number): string;
  /** Present for formats with stored responses; the router resolves references before `parse` and stores replies. */
  storedState?: StoredStateRules;
}
