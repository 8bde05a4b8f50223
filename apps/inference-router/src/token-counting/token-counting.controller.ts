import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { Rpc, TextFrame, TextGenerationRequest } from '@gateway/contracts';
import { TokenCountingService } from './token-counting.service';

@Controller()
export class TokenCountingController {
  constructor(private readonly counting: TokenCountingService) {}

  /** One `json` frame: the count in the format's shape, or the format's error body. */
  @Handles(Rpc.inferenceCountTokens)
  count(@Payload() request: TextGenerationRequest): Promise<TextFrame> {
    return this.counting.count(request);
  }
}
