import { InflightRequests } from '../text-generation/inflight-requests';
import { ModelCatalog } from '@gateway/catalog';
import { UsageRecordedEvent } from '@gateway/contracts';
import { MeteredCalls } from '../metering/metered-calls';
import { GatewayMetrics } from '@gateway/platform';
import { RouterMetrics } from '../observability/router-metrics';
import { recordingPublisher } from '../testing/recording-publisher';
import { MediaCalls } from './media-call';
import { DomainError, ErrorCode } from '@gateway/errors';

const CATALOG = ModelCatalog.fromYaml('models: []\n', {}, () => undefined);
const CALLER = { accountId: 'acct_1', keyId: 'key_1', keyType: 'master' as const, maskedKey: 'ek-...abcd', ip: '10.0.0.1', requestId: 'req_1' };

describe('MediaCalls', () => {
  it('counts a call in flight, by family, while it runs, whether it succeeds or fails, with one usage event each', async () => {
    const events: UsageRecordedEvent[] = [];
    const metered = new MeteredCalls(recordingPublisher(events));
    const calls = new MediaCalls(CATALOG, metered, new InflightRequests());
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = calls.run(CALLER, 'embeddings', async (outcome) => {
      outcome.model = 'embedder';
      await gate;
      return { kind: 'json', status: 200, body: {} } as never;
    });
    const failing = calls.run({ ...CALLER, requestId: 'req_2' }, 'moderations', async () => {
      await gate;
      throw new DomainError(ErrorCode.InvalidRequest, 'input is required', 'input');
    });
    expect(metered.inFlight).toBe(2);
    // The router's gauge, by family: one series per family the replica serves.
    const metrics = new GatewayMetrics();
    new RouterMetrics(metrics, metered, { ROUTER_FAMILIES: ['moderations', 'embeddings', 'images'] });
    const scraped = await metrics.render();
    expect(scraped).toContain('gateway_inflight_requests{family="embeddings"} 1');
    expect(scraped).toContain('gateway_inflight_requests{family="moderations"} 1');
    expect(scraped).toContain('gateway_inflight_requests{family="images"} 0');
    expect(scraped).not.toContain('family="text"');
    expect(scraped).toContain('gateway_router_families{families="embeddings,moderations,images"} 1');
    release();
    const [, refused] = await Promise.all([running, failing]);
    expect(refused).toEqual({
      kind: 'json',
      status: 400,
      body: { error: { message: 'input is required', type: 'invalid_request_error', code: 'invalid_request', param: 'input' } },
    });
    expect(metered.inFlight).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.map((event) => [event.requestId, event.status])).toEqual([
      ['req_1', 'success'],
      ['req_2', 'error'],
    ]);
  });
});
