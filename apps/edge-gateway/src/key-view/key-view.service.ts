import { Injectable } from '@nestjs/common';
import { KeyView, KeyViewRequest, Principal, Rpc } from '@gateway/contracts';
import { ServiceClient } from '../nats/service-client';
import { BudgetClock } from '../billing/budget-clock';

/** The calling key as key-service reads it now, figures included: one round trip, nothing cached. */
@Injectable()
export class KeyViewService {
  constructor(
    private readonly services: ServiceClient,
    private readonly clock: BudgetClock,
  ) {}

  /** Named by the authenticated principal alone: a key is only ever shown itself. */
  of(principal: Principal): Promise<KeyView> {
    // Read at the time budgets are admitted at (the same clock, which only tests move).
    const request: KeyViewRequest = { accountId: principal.accountId, keyId: principal.keyId, now: this.clock.now() };
    return this.services.request(Rpc.keyView, request);
  }
}
