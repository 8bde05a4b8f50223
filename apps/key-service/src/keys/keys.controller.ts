import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { AccountScoped, AuthenticateKeyRequest, KeysTouchedEvent, KeyView, KeyViewRequest, Principal, Rpc } from '@gateway/contracts';
import { KeysService } from './keys.service';

@Controller()
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  @Handles(Rpc.keysAuthenticate)
  authenticate(@Payload() request: AuthenticateKeyRequest): Promise<Principal | null> {
    return this.keys.authenticate(request.keyHash);
  }

  @Handles(Rpc.masterKeyRegenerate)
  regenerate(@Payload() request: AccountScoped): Promise<{ key: string }> {
    return this.keys.regenerateMasterKey(request.accountId);
  }

  @Handles(Rpc.keyView)
  view(@Payload() request: KeyViewRequest): Promise<KeyView> {
    return this.keys.view(request.accountId, request.keyId, request.now);
  }

  @Handles(Rpc.keysTouched)
  touched(@Payload() event: KeysTouchedEvent): Promise<void> {
    return this.keys.touch(event.keyIds, event.at);
  }
}
