import { JetStreamConnection } from '@gateway/platform';
import type { Msg, MsgHdrs, SubscriptionOptions } from 'nats';
import { isNoResponders, ReplyInbox } from './reply-inbox';

/** A NATS connection that records subscriptions and publishes, and delivers messages on demand. */
function fakeConnection() {
  const subscriptions: { subject: string; callback: NonNullable<SubscriptionOptions['callback']> }[] = [];
  const published: { subject: string; data: string; reply?: string }[] = [];
  const nats = {
    subscribe: (subject: string, options: SubscriptionOptions) => subscriptions.push({ subject, callback: options.callback! }),
    publish: (subject: string, data: string, options?: { reply?: string }) => published.push({ subject, data, reply: options?.reply }),
  };
  const deliver = (subject: string, data = 'x') => {
    for (const subscription of subscriptions) subscription.callback(null, { subject, data: new TextEncoder().encode(data) } as unknown as Msg);
  };
  return { connection: { nats } as unknown as JetStreamConnection, subscriptions, published, deliver };
}

describe('ReplyInbox', () => {
  it('shares one wildcard subscription between requests and routes each reply by its subject', () => {
    const { connection, subscriptions, published, deliver } = fakeConnection();
    const inbox = new ReplyInbox(connection);
    const first: string[] = [];
    const second: string[] = [];
    inbox.request('inference.text', 'one', undefined, (message) => first.push(new TextDecoder().decode(message.data)));
    inbox.request('inference.text', 'two', undefined, (message) => second.push(new TextDecoder().decode(message.data)));
    expect(subscriptions).toHaveLength(1);
    expect(subscriptions[0].subject).toMatch(/^_INBOX\.[A-Za-z0-9]+\.\*$/);
    const [a, b] = published.map((message) => message.reply!);
    expect(a).not.toBe(b);
    expect(a.startsWith(subscriptions[0].subject.slice(0, -1))).toBe(true);
    deliver(b, 'for two');
    deliver(a, 'for one');
    expect(first).toEqual(['for one']);
    expect(second).toEqual(['for two']);
  });

  it('drops replies to a closed exchange', () => {
    const { connection, published, deliver } = fakeConnection();
    const inbox = new ReplyInbox(connection);
    const seen: Msg[] = [];
    const exchange = inbox.request('inference.text', 'one', undefined, (message) => seen.push(message));
    exchange.close();
    exchange.close();
    deliver(published[0].reply!);
    expect(seen).toEqual([]);
    expect(inbox.open).toBe(0);
  });

  it('registers nothing when the publish throws (payload too large)', () => {
    const { connection } = fakeConnection();
    (connection.nats as unknown as { publish: () => void }).publish = () => {
      throw Object.assign(new Error('MAX_PAYLOAD_EXCEEDED'), { code: 'MAX_PAYLOAD_EXCEEDED' });
    };
    const inbox = new ReplyInbox(connection);
    expect(() => inbox.request('inference.text', 'big', undefined, () => undefined)).toThrow('MAX_PAYLOAD_EXCEEDED');
    expect(inbox.open).toBe(0);
  });

  it('tells a no-responders status message from a frame', () => {
    const status = { data: new Uint8Array(0), headers: { code: 503 } as unknown as MsgHdrs } as Msg;
    expect(isNoResponders(status)).toBe(true);
    expect(isNoResponders({ data: new TextEncoder().encode('{}') } as Msg)).toBe(false);
  });
});
