import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import {
  AccountScoped,
  CreateProxyKeyCommand,
  MessageResponse,
  ProxyKeyCommand,
  ProxyKeyRecord,
  Rpc,
  ToggleResponse,
  UpdateProxyKeyCommand,
} from '@gateway/contracts';
import { ProxyKeysService } from './proxy-keys.service';

@Controller()
export class ProxyKeysController {
  constructor(private readonly proxyKeys: ProxyKeysService) {}

  @Handles(Rpc.proxyKeyCreate)
  create(@Payload() command: CreateProxyKeyCommand): Promise<ProxyKeyRecord> {
    return this.proxyKeys.create(command);
  }

  @Handles(Rpc.proxyKeyList)
  list(@Payload() request: AccountScoped): Promise<ProxyKeyRecord[]> {
    return this.proxyKeys.list(request.accountId);
  }

  @Handles(Rpc.proxyKeyLookup)
  lookup(@Payload() command: ProxyKeyCommand): Promise<ProxyKeyRecord> {
    return this.proxyKeys.lookup(command);
  }

  @Handles(Rpc.proxyKeyUpdate)
  update(@Payload() command: UpdateProxyKeyCommand): Promise<MessageResponse> {
    return this.proxyKeys.update(command);
  }

  @Handles(Rpc.proxyKeyToggle)
  toggle(@Payload() command: ProxyKeyCommand): Promise<ToggleResponse> {
    return this.proxyKeys.toggle(command);
  }

  @Handles(Rpc.proxyKeyRemove)
  remove(@Payload() command: ProxyKeyCommand): Promise<MessageResponse> {
    return this.proxyKeys.remove(command);
  }

  @Handles(Rpc.proxyKeyRemoveAll)
  removeAll(@Payload() request: AccountScoped): Promise<MessageResponse> {
    return this.proxyKeys.removeAll(request.accountId);
  }
}
