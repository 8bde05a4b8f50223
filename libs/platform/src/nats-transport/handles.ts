import { EventPattern, MessagePattern } from '@nestjs/microservices';
import type { RpcContract } from '@gateway/contracts';

/**
 * Marks the handler of a subject of the `Rpc` table: `@EventPattern` for an event,
 * `@MessagePattern` otherwise. The transport validates the payload against the contract's schema
 * before the handler runs.
 */
export function Handles(contract: RpcContract): MethodDecorator {
  return contract.kind === 'event' ? EventPattern(contract.subject) : MessagePattern(contract.subject);
}
