import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import {
  AppendConversationItemsRequest,
  ConversationItemRequest,
  ConversationItemsPage,
  ConversationItemsRequest,
  ConversationObject,
  ConversationRequest,
  CreateConversationRequest,
  DeletedConversation,
  UpdateConversationRequest,
} from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';
import { AccountEnv } from '../account.env';
import { newConversationId, storedItems } from './conversation-items';
import { ConversationRow, ConversationsRepository } from './conversations.repository';

function notFound(id: string): DomainError {
  return new DomainError(ErrorCode.NotFound, `Conversation with id '${id}' not found.`, 'conversation_id');
}

function itemNotFound(id: string): DomainError {
  return new DomainError(ErrorCode.NotFound, `Item with id '${id}' not found.`, 'item_id');
}

const idOf = (item: Record<string, unknown>): string | null => (typeof item.id === 'string' ? item.id : null);

export function conversationObject(row: ConversationRow): ConversationObject {
  return { id: row.id, object: 'conversation', created_at: Math.floor(row.createdAt.getTime() / 1000), metadata: row.metadata };
}

export function itemsPage(data: Record<string, unknown>[], hasMore: boolean): ConversationItemsPage {
  return {
    object: 'list',
    data,
    first_id: data.length > 0 ? idOf(data[0]) : null,
    last_id: data.length > 0 ? idOf(data[data.length - 1]) : null,
    has_more: hasMore,
  };
}

/**
 * Conversations-API conversations: created, read and edited through the edge, read and appended
 * to by the router for `conversation` on `POST /v1/responses`. Kept as long as stored responses
 * after their last write, then pruned like them.
 */
@Injectable()
export class ConversationsService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ConversationsService.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly conversations: ConversationsRepository,
    @Inject(AccountEnv) private readonly env: Pick<AccountEnv, 'RESPONSES_RETENTION_SECONDS' | 'RESPONSES_PRUNE_INTERVAL_MS'>,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.prune(), this.env.RESPONSES_PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async prune(): Promise<void> {
    try {
      const deleted = await this.conversations.pruneExpired();
      if (deleted > 0) this.logger.log(`pruned ${deleted} expired conversations`);
    } catch (error) {
      this.logger.warn(`pruning conversations failed: ${(error as Error).message}`);
    }
  }

  private expiry(): Date {
    return new Date(Date.now() + this.env.RESPONSES_RETENTION_SECONDS * 1000);
  }

  async create(request: CreateConversationRequest): Promise<ConversationObject> {
    const items = storedItems(request.items, 'items');
    const row = await this.conversations.create({ ...request, id: newConversationId(), items, expiresAt: this.expiry() });
    return conversationObject(row);
  }

  async get(request: ConversationRequest): Promise<ConversationObject> {
    const row = await this.conversations.find(request, request.conversationId);
    if (!row) throw notFound(request.conversationId);
    return conversationObject(row);
  }

  async update(request: UpdateConversationRequest): Promise<ConversationObject> {
    const row = await this.conversations.touch(request, request.conversationId, this.expiry(), request.metadata);
    if (!row) throw notFound(request.conversationId);
    return conversationObject(row);
  }

  async delete(request: ConversationRequest): Promise<DeletedConversation> {
    if (!(await this.conversations.delete(request, request.conversationId))) throw notFound(request.conversationId);
    return { id: request.conversationId, object: 'conversation.deleted', deleted: true };
  }

  /** The items added, as stored, in order. */
  async append(request: AppendConversationItemsRequest): Promise<ConversationItemsPage> {
    const items = storedItems(request.items, 'items');
    if (!(await this.conversations.touch(request, request.conversationId, this.expiry()))) throw notFound(request.conversationId);
    await this.conversations.append(request.conversationId, items);
    return itemsPage(items, false);
  }

  /** OpenAI's list shape, newest first unless `order=asc`; `after` is an item id of the previous page. Without `limit`: every item. */
  async items(request: ConversationItemsRequest): Promise<ConversationItemsPage> {
    await this.get(request);
    const order = request.order ?? 'desc';
    let afterSeq: bigint | undefined;
    if (request.after !== undefined) {
      const seq = await this.conversations.seqOf(request.conversationId, request.after);
      if (seq === null)
        throw new DomainError(ErrorCode.InvalidRequest, `No item with id '${request.after}' in conversation '${request.conversationId}'.`, 'after');
      afterSeq = seq;
    }
    const limit = request.limit;
    const rows = await this.conversations.items(request.conversationId, order, afterSeq, limit !== undefined ? limit + 1 : undefined);
    const hasMore = limit !== undefined && rows.length > limit;
    return itemsPage(hasMore ? rows.slice(0, limit) : rows, hasMore);
  }

  async item(request: ConversationItemRequest): Promise<Record<string, unknown>> {
    await this.get(request);
    const item = await this.conversations.item(request.conversationId, request.itemId);
    if (!item) throw itemNotFound(request.itemId);
    return item;
  }

  async deleteItem(request: ConversationItemRequest): Promise<ConversationObject> {
    const conversation = await this.get(request);
    if (!(await this.conversations.deleteItem(request.conversationId, request.itemId))) throw itemNotFound(request.itemId);
    return conversation;
  }
}
