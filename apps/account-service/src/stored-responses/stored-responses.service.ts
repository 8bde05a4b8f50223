import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import {
  DeletedResponse,
  INPUT_ITEMS_DEFAULT_LIMIT,
  InputItemsPage,
  InputItemsRequest,
  SaveStoredResponseRequest,
  StoredItems,
  StoredItemsRequest,
  StoredResponseRecord,
  StoredResponseRequest,
} from '@gateway/contracts';
import { StoredResponseRow, StoredResponsesRepository } from './stored-responses.repository';
import { DomainError, ErrorCode } from '@gateway/errors';
import { AccountEnv } from '../account.env';

/** Rows read per lookup round when resolving `item_reference`s. */
const ITEM_LOOKUP_BATCH = 20;

const idOf = (item: Record<string, unknown>): string | undefined => (typeof item.id === 'string' ? item.id : undefined);

function outputOf(response: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(response.output) ? (response.output as Record<string, unknown>[]) : [];
}

function notFound(id: string): DomainError {
  return new DomainError(ErrorCode.NotFound, `Response with id '${id}' not found.`, 'response_id');
}

/**
 * Stored Responses-API responses: written by the router when a response completes, resolved by it
 * for `previous_response_id` and `item_reference`, read and deleted through the edge.
 */
@Injectable()
export class StoredResponsesService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(StoredResponsesService.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly responses: StoredResponsesRepository,
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
      const deleted = await this.responses.pruneExpired();
      if (deleted > 0) this.logger.log(`pruned ${deleted} expired stored responses`);
    } catch (error) {
      this.logger.warn(`pruning stored responses failed: ${(error as Error).message}`);
    }
  }

  async save(request: SaveStoredResponseRequest): Promise<{ saved: true }> {
    const id = request.response.id;
    if (typeof id !== 'string' || id === '') throw new DomainError(ErrorCode.InvalidRequest, 'response.id is required', 'response.id');
    const itemIds = [...request.inputItems, ...outputOf(request.response)].map(idOf).filter((itemId): itemId is string => itemId !== undefined);
    await this.responses.save({
      id,
      accountId: request.accountId,
      keyId: request.keyId,
      response: request.response,
      inputItems: request.inputItems,
      itemIds: [...new Set(itemIds)],
      expiresAt: new Date(Date.now() + this.env.RESPONSES_RETENTION_SECONDS * 1000),
    });
    return { saved: true };
  }

  async get(request: StoredResponseRequest): Promise<StoredResponseRecord> {
    const row = await this.responses.find(request, request.responseId);
    if (!row) throw notFound(request.responseId);
    return { response: row.response, inputItems: row.inputItems };
  }

  async delete(request: StoredResponseRequest): Promise<DeletedResponse> {
    if (!(await this.responses.delete(request, request.responseId))) throw notFound(request.responseId);
    return { id: request.responseId, object: 'response', deleted: true };
  }

  /** OpenAI's list shape; `after` is an item id of the previous page. */
  async inputItems(request: InputItemsRequest): Promise<InputItemsPage> {
    const row = await this.responses.find(request, request.responseId);
    if (!row) throw notFound(request.responseId);
    const ordered = request.order === 'asc' ? row.inputItems : [...row.inputItems].reverse();
    let start = 0;
    if (request.after !== undefined) {
      const at = ordered.findIndex((item) => idOf(item) === request.after);
      if (at < 0) throw new DomainError(ErrorCode.InvalidRequest, `No input item with id '${request.after}' in response '${request.responseId}'.`, 'after');
      start = at + 1;
    }
    const data = ordered.slice(start, start + (request.limit ?? INPUT_ITEMS_DEFAULT_LIMIT));
    return {
      object: 'list',
      data,
      first_id: data.length > 0 ? (idOf(data[0]) ?? null) : null,
      last_id: data.length > 0 ? (idOf(data[data.length - 1]) ?? null) : null,
      has_more: start + data.length < ordered.length,
    };
  }

  /**
   * The newest stored copy of each named item (an output item of a response, or an input item it
   * kept). Ids not found are left out: the router names them in its 404.
   */
  async items(request: StoredItemsRequest): Promise<StoredItems> {
    const wanted = new Set(request.itemIds);
    const items: Record<string, Record<string, unknown>> = {};
    const seen: string[] = [];
    while (wanted.size > 0) {
      const rows = await this.responses.withItems(request, [...wanted], seen, ITEM_LOOKUP_BATCH);
      for (const row of rows) {
        seen.push(row.id);
        collect(row, wanted, items);
      }
      if (rows.length < ITEM_LOOKUP_BATCH) break;
    }
    return { items };
  }
}

/** Output items first: an id is an output of the response that produced it and an input of its successors. */
function collect(row: StoredResponseRow, wanted: Set<string>, into: Record<string, Record<string, unknown>>): void {
  for (const item of [...outputOf(row.response), ...row.inputItems]) {
    const id = idOf(item);
    if (id !== undefined && wanted.has(id)) {
      into[id] = item;
      wanted.delete(id);
    }
  }
}
