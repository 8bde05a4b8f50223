import { Injectable } from '@nestjs/common';
import {
  BudgetWindowSpec,
  CreateProxyKeyCommand,
  SpendWindow,
  toBudgetWindowSpecs,
  maskKey,
  MessageResponse,
  ProxyKeyCommand,
  ProxyKeyMessages,
  ProxyKeyRecord,
  ToggleResponse,
  UpdateProxyKeyCommand,
} from '@gateway/contracts';
import { Account, ApiKey, Prisma } from '@gateway/db';
import { AccountsRepository } from '../accounts/accounts.repository';
import { PlanPolicy } from '../accounts/plan-policy';
import { KeyCryptoService } from '../crypto/key-crypto.service';
import { KeyEventsPublisher } from '../events/key-events.publisher';
import { budgetWindows, toProxyKeyRecord } from '../keys/key-records';
import { KeyBudgets } from '../keys/key-budgets';
import { newKeyId } from '../keys/keys.service';
import { ProxyKeysRepository } from './proxy-keys.repository';
import { DomainError, ErrorCode } from '@gateway/errors';

const notFound = () => new DomainError(ErrorCode.NotFound, ProxyKeyMessages.notFound, 'proxy_key');
const expiryDate = (expiresAt: number | undefined): Date | null => (expiresAt === undefined || expiresAt === -1 ? null : new Date(expiresAt * 1000));

/**
 * The allocation is one of the key's budgets (its `spend_window` in UTC, or `lifetime`): a budget
 * window of the same period in UTC would be the same window twice.
 */
function assertDistinctFromAllocation(spendWindow: SpendWindow | null, windows: BudgetWindowSpec[]): void {
  const index = windows.findIndex((window) => window.period === spendWindow && window.timezone === 'UTC');
  if (index >= 0) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      `budgets[${index}].period: '${spendWindow}' in UTC is the key's allocation already (allocated_ammount per spend_window); change that instead, or give this window another period or timezone`,
      'budgets',
    );
  }
}

@Injectable()
export class ProxyKeysService {
  constructor(
    private readonly proxyKeys: ProxyKeysRepository,
    private readonly accounts: AccountsRepository,
    private readonly plans: PlanPolicy,
    private readonly crypto: KeyCryptoService,
    private readonly events: KeyEventsPublisher,
    private readonly budgets: KeyBudgets,
  ) {}

  async create(command: CreateProxyKeyCommand): Promise<ProxyKeyRecord> {
    const account = await this.requireAccount(command.accountId);
    this.assertWithinDailyLimit(account, command.allocated_ammount);
    const windows = toBudgetWindowSpecs(command.budgets ?? []);
    assertDistinctFromAllocation(command.spend_window ?? null, windows);
    const value = this.crypto.generate('proxy');
    const cap = this.plans.proxyKeyCap(account.plan);
    const result = await this.proxyKeys.insertWithinCap(account.id, cap, {
      id: newKeyId(),
      accountId: account.id,
      type: 'proxy',
      keyHash: this.crypto.hash(value),
      maskedKey: maskKey(value),
      encryptedKey: this.crypto.encrypt(value),
      name: command.name,
      expiresAt: expiryDate(command.expires_at),
      allocatedAmount: new Prisma.Decimal(command.allocated_ammount),
      spendWindow: command.spend_window ?? null,
      modelWhitelist: command.model_whitelist ?? [],
      ipWhitelist: command.ip_whitelist ?? [],
      enabledThinking: command.enabled_thinking ?? false,
      budgets: windows as unknown as Prisma.InputJsonValue,
    });
    if ('capReached' in result) {
      throw new DomainError(ErrorCode.PlanLimitReached, `Proxy key limit reached: the ${account.plan} plan allows ${cap} proxy keys`);
    }
    return toProxyKeyRecord(result.created, value, false, await this.budgets.of(result.created));
  }

  async list(accountId: string): Promise<ProxyKeyRecord[]> {
    const keys = await this.proxyKeys.list(accountId);
    return Promise.all(keys.map(async (key) => toProxyKeyRecord(key, this.reveal(key), false, await this.budgets.of(key))));
  }

  async lookup(command: ProxyKeyCommand): Promise<ProxyKeyRecord> {
    const key = await this.requireOwned(command);
    return toProxyKeyRecord(key, command.proxy_key, true, await this.budgets.of(key));
  }

  async update(command: UpdateProxyKeyCommand): Promise<MessageResponse> {
    const key = await this.requireOwned(command);
    if (command.allocated_ammount !== undefined) {
      this.assertWithinDailyLimit(await this.requireAccount(command.accountId), command.allocated_ammount);
    }
    const windows = command.budgets === undefined ? budgetWindows(key) : toBudgetWindowSpecs(command.budgets);
    assertDistinctFromAllocation(command.spend_window === undefined ? key.spendWindow : command.spend_window, windows);
    const data: Prisma.ApiKeyUpdateInput = {};
    if (command.budgets !== undefined) data.budgets = windows as unknown as Prisma.InputJsonValue;
    if (command.name !== undefined) data.name = command.name;
    if (command.expires_at !== undefined) data.expiresAt = expiryDate(command.expires_at);
    if (command.allocated_ammount !== undefined) data.allocatedAmount = new Prisma.Decimal(command.allocated_ammount);
    if (command.spend_window !== undefined) data.spendWindow = command.spend_window;
    if (command.model_whitelist !== undefined) data.modelWhitelist = command.model_whitelist;
    if (command.ip_whitelist !== undefined) data.ipWhitelist = command.ip_whitelist;
    if (command.enabled_thinking !== undefined) data.enabledThinking = command.enabled_thinking;
    await this.proxyKeys.update(key.id, data);
    await this.events.keysChanged(command.accountId, [key.keyHash], 'proxy_updated');
    return { message: ProxyKeyMessages.updated };
  }

  async toggle(command: ProxyKeyCommand): Promise<ToggleResponse> {
    const keyHash = this.crypto.hash(command.proxy_key);
    const status = await this.proxyKeys.toggle(command.accountId, keyHash);
    if (status === null) throw notFound();
    await this.events.keysChanged(command.accountId, [keyHash], 'proxy_toggled');
    return { message: ProxyKeyMessages.statusUpdated, status };
  }

  async remove(command: ProxyKeyCommand): Promise<MessageResponse> {
    const keyHash = this.crypto.hash(command.proxy_key);
    if (!(await this.proxyKeys.deleteOwned(command.accountId, keyHash))) throw notFound();
    await this.events.keysChanged(command.accountId, [keyHash], 'proxy_removed');
    return { message: ProxyKeyMessages.deleted };
  }

  async removeAll(accountId: string): Promise<MessageResponse> {
    const hashes = await this.proxyKeys.deleteAll(accountId);
    await this.events.keysChanged(accountId, hashes, 'proxy_removed_all');
    return { message: ProxyKeyMessages.deletedAll };
  }

  private async requireOwned(command: ProxyKeyCommand): Promise<ApiKey> {
    const key = await this.proxyKeys.findOwned(command.accountId, this.crypto.hash(command.proxy_key));
    if (!key) throw notFound();
    return key;
  }

  private async requireAccount(accountId: string): Promise<Account> {
    const account = await this.accounts.findById(accountId);
    if (!account) throw new DomainError(ErrorCode.Unauthenticated, 'Account not found');
    return account;
  }

  private assertWithinDailyLimit(account: Account, amount: number): void {
    const limit = this.plans.dailyLimit(account);
    if (new Prisma.Decimal(amount).greaterThan(limit)) {
      throw new DomainError(ErrorCode.AllocationAboveDailyLimit, ProxyKeyMessages.allocationAboveDailyLimit(limit.toString()), 'allocated_ammount');
    }
  }

  private reveal(key: ApiKey): string {
    return key.encryptedKey ? this.crypto.decrypt(key.encryptedKey) : key.maskedKey;
  }
}
