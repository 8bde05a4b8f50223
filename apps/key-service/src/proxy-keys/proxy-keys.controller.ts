import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  AccountScoped,
  CreateProxyKeyCommand,
  MessageResponse,
  ProxyKeyCommand,
  ProxyKeyRecord,
  Subjects,
  ToggleResponse,
  UpdateProxyKeyCommand,
} from '@gateway/contracts';
import { ProxyKeysService } from './proxy-keys.service';

@Controller()
export class ProxyKeysController {
  constructor(private readonly proxyKeys: ProxyKeysService) {}

  @MessagePattern(Subjects.proxyKeyCreate)
  create(@Payload() command: CreateProxyKeyCommand): Promise<ProxyKeyRecord> {
    return this.proxyKeys.create(command);
  }

  @MessagePattern(Subjects.proxyKeyList)
  list(@Payload() request: AccountScoped): Promise<ProxyKeyRecord[]> {
    return this.proxyKeys.list(request.accountId);
  }

  @MessagePattern(Subjects.proxyKeyLookup)
  lookup(@Payload() command: ProxyKeyCommand): Promise<ProxyKeyRecord> {
    return this.proxyKeys.lookup(command);
  }

  @MessagePattern(Subjects.proxyKeyUpdate)
  update(@Payload() command: UpdateProxyKeyCommand): Promise<MessageResponse> {
    return this.proxyKeys.update(command);
  }

  @MessagePattern(Subjects.proxyKeyToggle)
  toggle(@Payload() command: ProxyKeyCommand): Promise<ToggleResponse> {
    return this.proxyKeys.toggle(command);
  }

  @MessagePattern(Subjects.proxyKeyRemove)
  remove(@Payload() command: ProxyKeyCommand): Promise<MessageResponse> {
    return this.proxyKeys.remove(command);
  }

  @MessagePattern(Subjects.proxyKeyRemoveAll)
  removeAll(@Payload() request: AccountScoped): Promise<MessageResponse> {
    return this.proxyKeys.removeAll(request.accountId);
  }
}
