/** The usage route of decisions (request logs, `/user/me`). */
export const DECISION_ROUTE = 'decisions';

/** The public endpoint clients must use for the decision model. */
export const DECISION_ENDPOINT = '/v1/systemone';
