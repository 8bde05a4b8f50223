import { RouterFamilies } from '@gateway/contracts';
import type { JetStreamConnection } from '@gateway/platform';
import { RouterLiveness } from '../liveness/router-liveness';

/** A replica identity for unit tests that compare every frame: no heartbeats, probe subscriptions on a stand-in. */
export function noHeartbeats(): RouterLiveness {
  const connection = { nats: { subscribe: () => ({ unsubscribe: () => undefined }) } } as unknown as JetStreamConnection;
  return new RouterLiveness(connection, { INFERENCE_HEARTBEAT_MS: 0, ROUTER_FAMILIES: [...RouterFamilies] });
}
