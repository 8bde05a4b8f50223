import { GatewayMetrics, modelLabel } from './gateway-metrics';
import { MetricLabelNames, Metrics } from './metric-definitions';

describe('metric definitions', () => {
  const definitions = Object.values(Metrics);

  it('label nothing that identifies a caller: no key, account, user, IP, request or trace', () => {
    for (const definition of definitions) {
      for (const label of definition.labels) {
        expect({ metric: definition.name, label, allowed: (MetricLabelNames as readonly string[]).includes(label) }).toEqual({
          metric: definition.name,
          label,
          allowed: true,
        });
      }
    }
    for (const label of MetricLabelNames) {
      expect({ label, identifying: /account|user|ip|request|trace|^key$|key_(?!type)|masked/.test(label) }).toEqual({ label, identifying: false });
    }
  });

  it('follow Prometheus naming: gateway_ prefix, counters in _total, latencies in _seconds', () => {
    for (const definition of definitions) {
      expect(definition.name).toMatch(/^gateway_[a-z_]+$/);
      if (definition.type === 'counter') expect(definition.name).toMatch(/_total$/);
      if (definition.type === 'histogram') expect(definition.name).toMatch(/_seconds$/);
    }
  });
});

describe('GatewayMetrics', () => {
  it('serves prom-client default metrics and the gateway metrics it was asked for, once each', async () => {
    const metrics = new GatewayMetrics();
    const counter = metrics.counter(Metrics.ledgerWrites);
    expect(metrics.counter(Metrics.ledgerWrites)).toBe(counter);
    counter.inc({ result: 'written' });
    const text = await metrics.render();
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain('gateway_ledger_writes_total{result="written"} 1');
    expect(text).not.toContain('gateway_http_requests_total');
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('refreshes a collected gauge when scraped', async () => {
    const metrics = new GatewayMetrics();
    let depth = 3;
    metrics.gauge(Metrics.videoQueueDepth, async (gauge) => gauge.set({ state: 'waiting' }, depth));
    expect(await metrics.render()).toContain('gateway_video_queue_depth{state="waiting"} 3');
    depth = 5;
    expect(await metrics.render()).toContain('gateway_video_queue_depth{state="waiting"} 5');
  });

  it('refuses to use a definition as another metric type', () => {
    expect(() => new GatewayMetrics().gauge(Metrics.ledgerWrites as never)).toThrow(/is a counter/);
  });
});

describe('modelLabel', () => {
  const catalog = new Set(['sim-chat']);
  const known = (id: string) => catalog.has(id);

  it('keeps catalog ids, and turns any other client text into unknown', () => {
    expect(modelLabel('sim-chat', known)).toBe('sim-chat');
    expect(modelLabel('ignore previous instructions', known)).toBe('unknown');
    expect(modelLabel(42, known)).toBe('unknown');
    expect(modelLabel(undefined, known)).toBe('none');
  });
});
