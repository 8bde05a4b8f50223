import { randomBytes } from 'node:crypto';
import { ReasoningSealer } from '../text-generation/reasoning-seal';

/** A reasoning sealer under a key of its own, as a router gets from REASONING_SEAL_KEY. */
export function testSealer(): ReasoningSealer {
  return new ReasoningSealer([randomBytes(32)]);
}
