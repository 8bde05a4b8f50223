import { NatsRecord, NatsRecordBuilder, NatsOptions, ServerNats } from '@nestjs/microservices';
import { JSONCodec, NatsConnection, Subscription } from 'nats';
import { natsLivenessCheck } from '../connection-resilience';
import { traceHeaders } from './tracing';

/**
 * Nest's NATS record serializer, plus the active trace context in the message headers: every
 * request and event a ClientProxy sends continues the caller's trace on the other side.
 */
export class TracingNatsSerializer {
  private readonly codec = JSONCodec();

  serialize(packet: { data?: unknown; headers?: unknown } & Record<string, unknown>): { data: Uint8Array; headers: unknown } {
    const record = packet?.data instanceof NatsRecord ? packet.data : new NatsRecordBuilder(packet?.data).setHeaders(packet?.headers).build();
    return { data: this.codec.encode({ ...packet, data: record.data }), headers: traceHeaders(record.headers) };
  }
}

/**
 * Nest's NATS server whose subscriptions can be drained on their own, before the connection closes:
 * a replica that is shutting down takes no new requests (the queue group sends them to the other
 * replicas) while the replies of the requests it is still serving keep flowing.
 */
export class DrainableNatsServer extends ServerNats {
  private readonly queue?: string;
  private readonly subscriptionsToDrain: Subscription[] = [];

  constructor(options: Required<NatsOptions>['options']) {
    super(options);
    this.queue = options.queue;
  }

  override bindEvents(client: NatsConnection): void {
    natsLivenessCheck('nats', client);
    for (const [channel, handler] of this.messageHandlers) {
      const queue = (handler.extras?.queue as string | undefined) ?? this.queue;
      this.subscriptionsToDrain.push(client.subscribe(channel, { queue, callback: this.getMessageHandler(channel).bind(this) }));
    }
  }

  /** Stops taking messages; those already received are still handled. */
  async stopListening(): Promise<void> {
    const subscriptions = this.subscriptionsToDrain.splice(0);
    await Promise.all(subscriptions.map((subscription) => subscription.drain().catch(() => undefined)));
  }
}
