import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  AppendConversationItemsRequest,
  CONVERSATION_APPEND_MAX,
  ConversationItemsRequest,
  SaveStoredResponseRequest,
  StoredItemsRequest,
  StoredResponseRecord,
  StoredResponseRequest,
  StoredResponseScope,
  Rpc,
  type RequestContract,
  type RequestOf,
  type ReplyOf,
  type CallerContext,
} from '@gateway/contracts';
import type { ResolvedRequest, StoredStateRules } from '@gateway/client-formats';
import { NatsRpcClient } from '@gateway/platform';
import { DomainError, ErrorCode, isDomainErrorPayload } from '@gateway/errors';
import { RouterEnv } from '../router.env';

export const STORE_CLIENT = Symbol('STORE_CLIENT');

/** Master keys see the account's stored responses; proxy and DevPass keys only their own. */
export function storeScope(caller: CallerContext): StoredResponseScope {
  return { accountId: caller.accountId, ...(caller.keyType === 'master' ? {} : { keyId: caller.keyId }) };
}

/**
 * The router's side of the stored Responses-API responses, which account-service keeps in
 * PostgreSQL: lookups before a call (`previous_response_id`, `item_reference`) and the write after it.
 */
@Injectable()
export class StoredResponsesClient {
  private readonly logger = new Logger(StoredResponsesClient.name);

  constructor(
    @Inject(STORE_CLIENT) private readonly nats: NatsRpcClient,
    @Inject(RouterEnv) private readonly env: Pick<RouterEnv, 'STORE_TIMEOUT_MS'>,
  ) {}

  /**
   * `previous_response_id`, `conversation` and `item_reference` replaced by the stored items they
   * name, before the format parses the body. A conversation's items stand where a previous
   * response's would (the two are exclusive).
   */
  async resolve(caller: CallerContext, rules: StoredStateRules, body: Record<string, unknown>): Promise<ResolvedRequest & { conversationId?: string }> {
    const references = rules.references(body);
    const [previous, conversation, items] = await Promise.all([
      references.previousResponseId ? this.previous(caller, references.previousResponseId) : undefined,
      references.conversationId ? this.conversation(caller, references.conversationId) : undefined,
      this.items(caller, references.itemIds),
    ]);
    const context = conversation ? { response: {}, inputItems: conversation } : previous;
    return { ...rules.resolve(body, context, items, caller.requestId), conversationId: references.conversationId };
  }

  /** Every item of the conversation, oldest first, or a 404 naming `conversation` when it is unknown or not the caller's. */
  async conversation(caller: CallerContext, conversationId: string): Promise<Record<string, unknown>[]> {
    const request: ConversationItemsRequest = { ...storeScope(caller), conversationId, order: 'asc' };
    try {
      return (await this.request(Rpc.conversationsItems, request)).data;
    } catch (error) {
      if (isDomainErrorPayload(error) && error.code === ErrorCode.NotFound) {
        throw new DomainError(ErrorCode.NotFound, `Conversation with id '${conversationId}' not found.`, 'conversation');
      }
      throw unavailable(error);
    }
  }

  /**
   * Appends a completed turn (the request's input items, then the response's output items) to its
   * conversation before the client sees its end. A failure is logged, not answered, as for `save`.
   */
  async appendTurn(caller: CallerContext, conversationId: string, inputItems: Record<string, unknown>[], response: Record<string, unknown>): Promise<void> {
    const output = Array.isArray(response.output) ? (response.output as Record<string, unknown>[]) : [];
    const items = [...inputItems, ...output];
    try {
      // In order, in writes of at most CONVERSATION_APPEND_MAX items (a long input could exceed one).
      for (let at = 0; at < items.length; at += CONVERSATION_APPEND_MAX) {
        const request: AppendConversationItemsRequest = { ...storeScope(caller), conversationId, items: items.slice(at, at + CONVERSATION_APPEND_MAX) };
        await this.request(Rpc.conversationsAppend, request);
      }
    } catch (error) {
      const reason = isDomainErrorPayload(error) ? error.message : (error as Error).message;
      this.logger.warn(`response ${String(response.id)} of request ${caller.requestId} was not appended to conversation ${conversationId}: ${reason}`);
    }
  }

  /** The stored response, or a 404 naming `previous_response_id` when it is unknown, expired or not the caller's. */
  async previous(caller: CallerContext, responseId: string): Promise<StoredResponseRecord> {
    const request: StoredResponseRequest = { ...storeScope(caller), responseId };
    try {
      return await this.request(Rpc.responsesGet, request);
    } catch (error) {
      if (isDomainErrorPayload(error) && error.code === ErrorCode.NotFound) {
        throw new DomainError(ErrorCode.NotFound, `Previous response with id '${responseId}' not found.`, 'previous_response_id');
      }
      throw unavailable(error);
    }
  }

  async items(caller: CallerContext, itemIds: string[]): Promise<Record<string, Record<string, unknown>>> {
    if (itemIds.length === 0) return {};
    const request: StoredItemsRequest = { ...storeScope(caller), itemIds };
    try {
      return (await this.request(Rpc.responsesItems, request)).items;
    } catch (error) {
      throw isDomainErrorPayload(error) && error.code === ErrorCode.InvalidRequest
        ? new DomainError(ErrorCode.InvalidRequest, error.message, 'input')
        : unavailable(error);
    }
  }

  /**
   * Stores a reply before the client sees its end, so its next request can refer to it. A failure
   * is logged, not answered: the reply was generated and paid for, and a later reference to it
   * gets the 404 any unknown id gets.
   */
  async save(caller: CallerContext, response: Record<string, unknown>, inputItems: Record<string, unknown>[]): Promise<void> {
    const request: SaveStoredResponseRequest = { accountId: caller.accountId, keyId: caller.keyId, response, inputItems };
    try {
      await this.request(Rpc.responsesSave, request);
    } catch (error) {
      const reason = isDomainErrorPayload(error) ? error.message : (error as Error).message;
      this.logger.warn(`response ${String(response.id)} of request ${caller.requestId} was not stored: ${reason}`);
    }
  }

  private request<C extends RequestContract>(contract: C, payload: RequestOf<C>): Promise<ReplyOf<C>> {
    return this.nats.request(contract, payload, this.env.STORE_TIMEOUT_MS);
  }
}

function unavailable(cause: unknown): DomainError {
  return new DomainError(ErrorCode.ServiceUnavailable, 'Stored responses are unavailable right now; retry shortly', undefined, { cause });
}
