import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ModelEntry, Subjects, TextFrame, TextGenerationRequest } from '@gateway/contracts';
import { Observable } from 'rxjs';
import { ModelCatalog } from '@gateway/catalog';
import { TextGenerationService } from './text-generation.service';

@Controller()
export class TextGenerationController {
  constructor(
    private readonly generation: TextGenerationService,
    private readonly catalog: ModelCatalog,
  ) {}

  /** Every frame emitted here reaches the edge as its own NATS message, as soon as it is emitted. */
  @MessagePattern(Subjects.inferenceText)
  generate(@Payload() request: TextGenerationRequest): Observable<TextFrame> {
    return this.generation.generate(request);
  }

  @MessagePattern(Subjects.inferenceModels)
  models(): ModelEntry[] {
    return this.catalog.list();
  }
}
