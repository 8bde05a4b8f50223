import { Controller } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { ModelEntry, Subjects } from '@gateway/contracts';
import { ModelCatalog } from '@gateway/catalog';

/** `inference.text` itself is served by TextGenerationEndpoint, over plain nats.js. */
@Controller()
export class TextGenerationController {
  constructor(private readonly catalog: ModelCatalog) {}

  @MessagePattern(Subjects.inferenceModels)
  models(): ModelEntry[] {
    return this.catalog.list();
  }
}
