import { IsString, Length } from 'class-validator';
import { IsStorableText } from '../validation';
import { CreateProxyKeyDto, PROXY_KEY_VALUE_MAX, UpdateProxyKeyDto } from './proxy-key.dto';

/** NATS payloads: the HTTP body plus the account the edge authenticated. Same rules as the body. */
export class CreateProxyKeyCommand extends CreateProxyKeyDto {
  @IsString()
  @Length(1, 64)
  accountId: string;
}

export class UpdateProxyKeyCommand extends UpdateProxyKeyDto {
  @IsString()
  @Length(1, 64)
  accountId: string;
}

export class ProxyKeyCommand {
  @IsString()
  @Length(1, 64)
  accountId: string;

  @IsString()
  @Length(1, PROXY_KEY_VALUE_MAX)
  @IsStorableText()
  proxy_key: string;
}
