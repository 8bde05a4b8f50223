import { Injectable } from '@nestjs/common';
import {
  AccountScoped,
  CreateProxyKeyCommand,
  CreateProxyKeyDto,
  MessageResponse,
  ProxyKeyCommand,
  ProxyKeyRecord,
  ToggleResponse,
  UpdateProxyKeyCommand,
  UpdateProxyKeyDto,
  Rpc,
} from '@gateway/contracts';
import { AuthCacheService } from '../auth/auth-cache.service';
import { ServiceClient } from '../nats/service-client';
import { ConsoleSessions } from '../console-session/console-sessions';

/**
 * Maps the HTTP calls to key-service commands, adding the authenticated account. A change to a key
 * takes effect on this edge before the answer goes out.
 */
@Injectable()
export class ProxyKeysService {
  constructor(
    private readonly services: ServiceClient,
    private readonly cache: AuthCacheService,
    private readonly sessions: ConsoleSessions,
  ) {}

  create(accountId: string, body: CreateProxyKeyDto): Promise<ProxyKeyRecord> {
    const command: CreateProxyKeyCommand = { ...body, accountId };
    return this.services.request(Rpc.proxyKeyCreate, command);
  }

  list(accountId: string): Promise<ProxyKeyRecord[]> {
    const request: AccountScoped = { accountId };
    return this.services.request(Rpc.proxyKeyList, request);
  }

  lookup(accountId: string, proxyKey: string): Promise<ProxyKeyRecord> {
    return this.services.request(Rpc.proxyKeyLookup, this.command(accountId, proxyKey));
  }

  update(accountId: string, body: UpdateProxyKeyDto): Promise<MessageResponse> {
    const command: UpdateProxyKeyCommand = { ...body, accountId };
    return this.changing(accountId, this.services.request(Rpc.proxyKeyUpdate, command));
  }

  /** Either way, the key's console sessions end: switching it back on does not bring them back. */
  async toggle(accountId: string, proxyKey: string): Promise<ToggleResponse> {
    const result = await this.changing(accountId, this.services.request(Rpc.proxyKeyToggle, this.command(accountId, proxyKey)));
    await this.sessions.endKey(AuthCacheService.hash(proxyKey));
    return result;
  }

  async remove(accountId: string, proxyKey: string): Promise<MessageResponse> {
    const result = await this.changing(accountId, this.services.request(Rpc.proxyKeyRemove, this.command(accountId, proxyKey)));
    await this.sessions.endKey(AuthCacheService.hash(proxyKey));
    return result;
  }

  removeAll(accountId: string): Promise<MessageResponse> {
    const request: AccountScoped = { accountId };
    return this.changing(accountId, this.services.request(Rpc.proxyKeyRemoveAll, request));
  }

  private async changing<T>(accountId: string, change: Promise<T>): Promise<T> {
    const result = await change;
    await this.cache.forgetAccount(accountId);
    return result;
  }

  private command(accountId: string, proxyKey: string): ProxyKeyCommand {
    return { accountId, proxy_key: proxyKey };
  }
}
