import { Injectable } from '@nestjs/common';
import { KeyView, KeyViewRequest, Principal, Rpc } from '@gateway/contracts';
import { ServiceClient } from '../nats/service-client';

/** The calling key as key-service reads it now, figures included: one round trip, nothing cached. */
@Injectable()
export class KeyViewService {
  constructor(private readonly services: ServiceClient) {}

  /** Named by the authenticated principal alone: a key is only ever shown itself. */
  of(principal: Principal): Promise<KeyView> {
    const request: KeyViewRequest = { accountId: principal.accountId, keyId: principal.keyId };
    return this.services.request(Rpc.keyView, request);
  }
}
