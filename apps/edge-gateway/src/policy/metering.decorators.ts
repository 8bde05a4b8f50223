import { SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { ModelCatalog } from '@gateway/catalog';
import type { CostEstimate } from '../billing/request-cost';

export const METERED_ROUTE = 'policy:metered';
export const UNMETERED_ROUTE = 'policy:unmetered';
export const FREE_SUMMARY_POLL = 'policy:free-summary-poll';
export const METERED_RELAY = 'policy:metered-relay';

/** The worst case of one request (see `billing/request-cost.ts`); null when the model is unknown and nothing will be charged. */
export type CostEstimator = (catalog: ModelCatalog, body: Record<string, unknown>) => CostEstimate | null;

/**
 * The route spends credits: the rate-limit guard counts the estimate's tokens against the plan's
 * tokens per minute and hands the estimate on (`request.costEstimate`) for the budget reservation.
 * A route that reaches a metered relay without it would run with no reservation and no token
 * limit, which is why `metering-coverage.spec.ts` refuses such a route.
 */
export const Metered =
  (estimator: CostEstimator): MethodDecorator =>
  (target, key, descriptor) => {
    SetMetadata(METERED_ROUTE, estimator)(target, key, descriptor);
    // The API reference documents the budget headers of metered answers.
    ApiExtension(METERED_EXTENSION, true)(target, key, descriptor);
  };

/** The OpenAPI extension `@Metered` sets on an operation (removed when the document is built). */
export const METERED_EXTENSION = 'x-metered';

/**
 * The handler belongs to a controller that reaches a metered relay but does not itself spend
 * credits (it describes, or re-attaches to work already paid for). The reason is for the reader.
 */
export const Unmetered = (reason: string): MethodDecorator => SetMetadata(UNMETERED_ROUTE, reason);

/** The route may be polled once a minute without counting against the plan's request limit. */
export const FreeSummaryPoll = (): MethodDecorator => SetMetadata(FREE_SUMMARY_POLL, true);

/**
 * The provider sends billable work on a caller's behalf (to the inference router or the video
 * queue) and reserves its cost from `request.costEstimate`. Every route reaching it must declare
 * `@Metered` or `@Unmetered`; the marker is how the coverage test knows, without a list of URLs.
 */
export const MeteredRelay = (): ClassDecorator => SetMetadata(METERED_RELAY, true);
