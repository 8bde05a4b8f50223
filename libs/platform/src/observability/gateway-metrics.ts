import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { MetricDefinition, MetricLabel } from './metric-definitions';

type Collect<L extends string> = (gauge: Gauge<L>) => void | Promise<void>;

/**
 * The process's Prometheus registry: prom-client's default process metrics plus the gateway's own,
 * created on first use from their definitions (so each app exports only what it measures).
 */
@Injectable()
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly created = new Map<string, Counter<string> | Gauge<string> | Histogram<string>>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  counter<L extends MetricLabel>(definition: MetricDefinition<L>): Counter<L> {
    return this.once(definition, 'counter', () => new Counter<L>(this.config(definition)));
  }

  histogram<L extends MetricLabel>(definition: MetricDefinition<L>): Histogram<L> {
    return this.once(definition, 'histogram', () => new Histogram<L>({ ...this.config(definition), buckets: definition.buckets }));
  }

  /** A gauge; `collect` (optional) refreshes it when scraped, e.g. from a queue's counts. */
  gauge<L extends MetricLabel>(definition: MetricDefinition<L>, collect?: Collect<L>): Gauge<L> {
    return this.once(definition, 'gauge', () => {
      const gauge: Gauge<L> = new Gauge<L>({
        ...this.config(definition),
        ...(collect ? { collect: () => collect(gauge) } : {}),
      });
      return gauge;
    });
  }

  /** The exposition text for `/metrics`. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private config<L extends MetricLabel>(definition: MetricDefinition<L>) {
    return { name: definition.name, help: definition.help, labelNames: definition.labels, registers: [this.registry] };
  }

  private once<T extends Counter<string> | Gauge<string> | Histogram<string>>(
    definition: MetricDefinition,
    type: MetricDefinition['type'],
    create: () => T,
  ): T {
    if (definition.type !== type) throw new Error(`${definition.name} is a ${definition.type}, not a ${type}`);
    let metric = this.created.get(definition.name);
    if (!metric) {
      metric = create();
      this.created.set(definition.name, metric);
    }
    return metric as T;
  }
}

/** A catalog model id as a label value: free text from a client never becomes a label. */
export function modelLabel(model: unknown, isCatalogModel: (id: string) => boolean): string {
  if (model === undefined || model === null) return 'none';
  return typeof model === 'string' && isCatalogModel(model) ? model : 'unknown';
}
