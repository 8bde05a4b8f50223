import type { NatsRpcClient } from '@gateway/platform';
import { StoredResponsesClient } from '../stored-responses/stored-responses.client';

/** For unit tests whose calls never reach the stored-responses store: any use of it fails the call. */
export function noStore(): StoredResponsesClient {
  const nats = { request: () => Promise.reject(new Error('this test has no stored-responses store')) } as unknown as NatsRpcClient;
  return new StoredResponsesClient(nats, { STORE_TIMEOUT_MS: 1_000 });
}
