/**
 * Every metric the gateway exports, by name. Names follow Prometheus conventions and are what
 * dashboards and alerts query: treat them as persisted. Labels are bounded by construction: route
 * patterns, catalog model ids (anything else is `unknown`), statuses, key types, provider
 * adapters, NATS subjects, endpoint families and fixed enums. Never a key, an account id, an IP or
 * a request id.
 */
export const MetricLabelNames = [
  'route',
  'model',
  'status',
  'key_type',
  'family',
  'families',
  'provider',
  'subject',
  'state',
  'outcome',
  'result',
  'reason',
] as const;
export type MetricLabel = (typeof MetricLabelNames)[number];

export interface MetricDefinition<L extends MetricLabel = MetricLabel> {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  labels: readonly L[];
  buckets?: number[];
}

/** Request-scale latencies: 5 ms to 5 minutes (long generations). */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** NATS hops inside the cluster are sub-millisecond to a few seconds. */
const NATS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Video jobs run for seconds to tens of minutes. */
const VIDEO_JOB_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600];

const define = <L extends MetricLabel>(definition: MetricDefinition<L>): MetricDefinition<L> => definition;

export const Metrics = {
  httpRequests: define({
    name: 'gateway_http_requests_total',
    help: "HTTP requests answered by the edge, by route pattern, catalog model, status, key type and the route's endpoint family",
    type: 'counter',
    labels: ['route', 'model', 'status', 'key_type', 'family'],
  }),
  httpRequestDuration: define({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from a request reaching the edge to its response (or stream) ending',
    type: 'histogram',
    labels: ['route', 'model', 'status', 'key_type', 'family'],
    buckets: REQUEST_BUCKETS,
  }),
  inflightRequests: define({
    name: 'gateway_inflight_requests',
    help: 'Work in progress, by endpoint family: on the edge, HTTP requests being served; on the router, upstream calls (generations, decisions, media)',
    type: 'gauge',
    labels: ['family'],
  }),
  routerFamilies: define({
    name: 'gateway_router_families',
    help: 'Always 1: the endpoint families this router replica serves (ROUTER_FAMILIES), comma-separated in `families`',
    type: 'gauge',
    labels: ['families'],
  }),
  streamTtfb: define({
    name: 'gateway_stream_ttfb_seconds',
    help: 'Time from a streamed request reaching the edge to its first event written to the client',
    type: 'histogram',
    labels: ['route', 'model'],
    buckets: REQUEST_BUCKETS,
  }),
  streamClientsCut: define({
    name: 'gateway_stream_clients_cut_total',
    help: 'Streamed answers cut off because the client left more than STREAM_CLIENT_BACKLOG_BYTES unread (the upstream call stopped, billed as cancelled)',
    type: 'counter',
    labels: ['route'],
  }),
  upstreamRequestDuration: define({
    name: 'gateway_upstream_request_duration_seconds',
    help: 'One upstream attempt: until the whole answer, or for a stream until its first event',
    type: 'histogram',
    labels: ['provider', 'model'],
    buckets: REQUEST_BUCKETS,
  }),
  upstreamErrors: define({
    name: 'gateway_upstream_errors_total',
    help: 'Failed upstream attempts: connect errors, timeouts, 429, 5xx, refused credentials, streams cut off',
    type: 'counter',
    labels: ['provider', 'model'],
  }),
  routeState: define({
    name: 'gateway_route_state',
    help: "An upstream route's circuit breaker on this replica (router or video-worker): 0 closed, 1 half-open, 2 open (route = <model>/<route name or index>)",
    type: 'gauge',
    labels: ['route'],
  }),
  routeRequests: define({
    name: 'gateway_route_requests_total',
    help: 'Upstream route decisions and attempts: success, error, rate_limited, timeout, client_error, skipped_open, skipped_quota',
    type: 'counter',
    labels: ['route', 'outcome'],
  }),
  natsRequestDuration: define({
    name: 'gateway_nats_request_duration_seconds',
    help: 'Edge to back-end service over NATS: until the first reply (for a stream, its first frame)',
    type: 'histogram',
    labels: ['subject'],
    buckets: NATS_BUCKETS,
  }),
  videoQueueDepth: define({
    name: 'gateway_video_queue_depth',
    help: 'Jobs in the video queue by state, read from BullMQ when scraped',
    type: 'gauge',
    labels: ['state'],
  }),
  videoJobDuration: define({
    name: 'gateway_video_job_duration_seconds',
    help: 'Time a video job spent in the processor, by outcome',
    type: 'histogram',
    labels: ['outcome'],
    buckets: VIDEO_JOB_BUCKETS,
  }),
  meteringPendingEvents: define({
    name: 'gateway_metering_pending_events',
    help: 'Usage events in the USAGE stream not yet delivered to the metering consumer (JetStream num_pending)',
    type: 'gauge',
    labels: [],
  }),
  ledgerWrites: define({
    name: 'gateway_ledger_writes_total',
    help: 'Usage events handled by metering: written to the ledger, duplicates of one already written, or failed (retried)',
    type: 'counter',
    labels: ['result'],
  }),
  usageEventsDeadLettered: define({
    name: 'gateway_usage_events_dead_lettered_total',
    help: 'Usage events metering could not record and set aside in the USAGE_DEAD stream, by reason (not_json, unstorable_text, invalid_event, data_error, max_deliveries)',
    type: 'counter',
    labels: ['reason'],
  }),
} as const;
