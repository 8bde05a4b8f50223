import type { IncomingHttpHeaders } from 'node:http';

/** What a client's own request id may look like to be echoed and logged (anything else is ignored). */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The client's own id for a request, from `x-client-request-id` (OpenAI's header) or else
 * `x-request-id`: echoed as `x-client-request-id`, logged, and carried in the usage event. It is
 * never the gateway's request id, which is generated per request because it keys the ledger, the
 * cost reservation and the video job: a client reusing an id must not share them.
 */
export function clientRequestId(request: { headers: IncomingHttpHeaders }): string | undefined {
  for (const name of ['x-client-request-id', 'x-request-id']) {
    const given = request.headers[name];
    if (typeof given === 'string' && CLIENT_REQUEST_ID.test(given)) return given;
  }
  return undefined;
}
