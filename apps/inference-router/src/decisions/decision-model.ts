export { DECISION_ROUTE } from '@gateway/contracts';

/** The public endpoint clients must use for the decision model. */
export const DECISION_ENDPOINT = '/v1/systemone';
