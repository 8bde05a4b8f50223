import { Injectable } from '@nestjs/common';
import { maskKey, Plan } from '@gateway/contracts';
import { Account, Prisma } from '@gateway/db';
import { randomUUID } from 'node:crypto';
import { KeyCryptoService } from '../crypto/key-crypto.service';
import { KeyEventsPublisher } from '../events/key-events.publisher';
import { KeysRepository } from '../keys/keys.repository';
import { KeysService, newKeyId } from '../keys/keys.service';
import { AccountsRepository } from './accounts.repository';
import { DomainError, ErrorCode } from '@gateway/errors';

export const BOOTSTRAP_KEY_NAME = 'bootstrap';

export interface CreatedAccount {
  account: Account;
  masterKey: string;
}

export interface BootstrapRequest {
  plan: Plan;
  credits: string;
  masterKey?: string;
  devKey?: string;
}

export interface BootstrapResult {
  accountId: string;
  created: boolean;
  /** Present when this run issued the key (generated or taken from the environment). */
  masterKey?: string;
  devKey?: string;
}

/** Operator actions on accounts (the admin CLI), and the bootstrap account of a fresh install. */
@Injectable()
export class AccountsService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly keysRepository: KeysRepository,
    private readonly keys: KeysService,
    private readonly crypto: KeyCryptoService,
    private readonly events: KeyEventsPublisher,
  ) {}

  async create(plan: Plan, credits: string, masterKey?: string, isBootstrap = false): Promise<CreatedAccount> {
    const key = masterKey ?? this.crypto.generate('master');
    const account = await this.accounts.createWithKeys({ id: `acct_${randomUUID().replace(/-/g, '')}`, plan, credits, isBootstrap }, [
      { id: newKeyId(), type: 'master', keyHash: this.crypto.hash(key), maskedKey: maskKey(key) },
    ]);
    return { account, masterKey: key };
  }

  list(): Promise<Account[]> {
    return this.accounts.list();
  }

  async credit(accountId: string, amount: string): Promise<Account> {
    await this.require(accountId);
    return this.accounts.addCredits(accountId, new Prisma.Decimal(amount).toString());
  }

  async createDevPass(accountId: string, value?: string): Promise<string> {
    await this.require(accountId);
    return this.keys.issueKey(accountId, 'dev', value);
  }

  /**
   * Idempotent: the first run creates the account with the plan, credits and keys; later runs keep
   * its credits, apply the plan, and install keys given in the environment that it does not hold yet.
   */
  async ensureBootstrap(request: BootstrapRequest): Promise<BootstrapResult> {
    const existing = await this.accounts.findBootstrap();
    if (!existing) {
      const { account, masterKey } = await this.create(request.plan, request.credits, request.masterKey, true);
      const devKey = await this.keys.issueKey(account.id, 'dev', request.devKey, BOOTSTRAP_KEY_NAME);
      return { accountId: account.id, created: true, masterKey, devKey };
    }
    const result: BootstrapResult = { accountId: existing.id, created: false };
    if (existing.plan !== request.plan) {
      await this.accounts.setPlan(existing.id, request.plan);
      await this.events.keysChanged(existing.id, [], 'account_updated');
    }
    if (request.masterKey && !(await this.holds(existing.id, 'master', request.masterKey))) {
      await this.keysRepository.replaceMasterKey(existing.id, this.keys.newKeyRow(existing.id, 'master', request.masterKey));
      await this.events.keysChanged(existing.id, [], 'master_regenerated');
      result.masterKey = request.masterKey;
    }
    const devKeys = await this.keysRepository.findByAccount(existing.id, 'dev');
    if (request.devKey && !devKeys.some((key) => key.keyHash === this.crypto.hash(request.devKey as string))) {
      const replaced = devKeys.filter((key) => key.name === BOOTSTRAP_KEY_NAME);
      await this.keysRepository.deleteByIds(replaced.map((key) => key.id));
      result.devKey = await this.keys.issueKey(existing.id, 'dev', request.devKey, BOOTSTRAP_KEY_NAME);
      await this.events.keysChanged(
        existing.id,
        replaced.map((key) => key.keyHash),
        'account_updated',
      );
    }
    return result;
  }

  private async holds(accountId: string, type: 'master' | 'dev', value: string): Promise<boolean> {
    const key = await this.keysRepository.findByHash(this.crypto.hash(value));
    if (key && (key.accountId !== accountId || key.type !== type)) {
      throw new DomainError(ErrorCode.InvalidRequest, `the configured ${type} key belongs to another account or key type`);
    }
    return key !== null;
  }

  private async require(accountId: string): Promise<Account> {
    const account = await this.accounts.findById(accountId);
    if (!account) throw new DomainError(ErrorCode.NotFound, `account ${accountId} not found`);
    return account;
  }
}
