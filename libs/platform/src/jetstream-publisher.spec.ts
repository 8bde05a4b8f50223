import type { Msg, MsgHdrs, NatsConnection, SubscriptionOptions } from 'nats';
import { AckedPublisher, JetStreamPublishError } from './jetstream.connection';

/** A connection that records publishes and lets the test answer them on the reply subject. */
function fakeNats() {
  const published: { subject: string; reply: string; headers: MsgHdrs }[] = [];
  let deliver: NonNullable<SubscriptionOptions['callback']> = () => undefined;
  const subscribed: string[] = [];
  const nats = {
    subscribe: (subject: string, options: SubscriptionOptions) => {
      subscribed.push(subject);
      deliver = options.callback!;
    },
    publish: (subject: string, _data: Uint8Array, options: { reply: string; headers: MsgHdrs }) => published.push({ subject, ...options }),
  } as unknown as NatsConnection;
  const answer = (reply: string, data: string, headers?: Partial<MsgHdrs>) =>
    deliver(null, { subject: reply, data: new TextEncoder().encode(data), headers } as unknown as Msg);
  return { nats, published, subscribed, answer };
}

const data = new TextEncoder().encode('{}');

describe('AckedPublisher', () => {
  it('resolves each publish with its own ack, over one reply subscription, with the message id header', async () => {
    const { nats, published, subscribed, answer } = fakeNats();
    const publisher = new AckedPublisher(nats);
    const first = publisher.publish('usage.recorded', data, { msgID: 'req_1' });
    const second = publisher.publish('usage.recorded', data, { msgID: 'req_2' });
    expect(subscribed).toHaveLength(1);
    expect(published.map((p) => p.headers.get('Nats-Msg-Id'))).toEqual(['req_1', 'req_2']);
    answer(published[1].reply, '{"stream":"USAGE","seq":8,"duplicate":true}');
    answer(published[0].reply, '{"stream":"USAGE","seq":7}');
    await expect(first).resolves.toEqual({ stream: 'USAGE', seq: 7 });
    await expect(second).resolves.toEqual({ stream: 'USAGE', seq: 8, duplicate: true });
    expect(publisher.pending).toBe(0);
  });

  it('rejects with the code of a refusal: no stream (503 status), an API error, no answer in time', async () => {
    jest.useFakeTimers();
    try {
      const { nats, published, answer } = fakeNats();
      const publisher = new AckedPublisher(nats, 1_000);
      const noStream = publisher.publish('usage.recorded', data, { msgID: 'a' });
      const refused = publisher.publish('usage.recorded', data, { msgID: 'b' });
      const unanswered = publisher.publish('usage.recorded', data, { msgID: 'c' });
      answer(published[0].reply, '', { code: 503, description: 'No Responders' } as Partial<MsgHdrs>);
      answer(published[1].reply, '{"error":{"code":400,"err_code":10060,"description":"expected stream does not match"}}');
      jest.advanceTimersByTime(1_000);
      await expect(noStream).rejects.toMatchObject({ code: '503' });
      await expect(refused).rejects.toMatchObject({ code: '400', message: 'expected stream does not match' });
      await expect(unanswered).rejects.toBeInstanceOf(JetStreamPublishError);
      await expect(unanswered).rejects.toMatchObject({ code: 'TIMEOUT' });
      // A late answer finds nobody waiting.
      answer(published[2].reply, '{"stream":"USAGE","seq":9}');
      expect(publisher.pending).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
