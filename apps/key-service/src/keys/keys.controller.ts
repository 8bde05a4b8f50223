import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { AccountScoped, AuthenticateKeyRequest, KeysTouchedEvent, Principal, Subjects } from '@gateway/contracts';
import { KeysService } from './keys.service';

@Controller()
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  @MessagePattern(Subjects.keysAuthenticate)
  authenticate(@Payload() request: AuthenticateKeyRequest): Promise<Principal | null> {
    return this.keys.authenticate(request.keyHash);
  }

  @MessagePattern(Subjects.masterKeyRegenerate)
  regenerate(@Payload() request: AccountScoped): Promise<{ key: string }> {
    return this.keys.regenerateMasterKey(request.accountId);
  }

  @EventPattern(Subjects.keysTouched)
  touched(@Payload() event: KeysTouchedEvent): Promise<void> {
    return this.keys.touch(event.keyIds, event.at);
  }
}
