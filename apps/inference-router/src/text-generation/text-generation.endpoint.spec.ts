import { GracefulShutdown, JetStreamConnection } from '@gateway/platform';
import type { TextFrame, TextGenerationRequest, TextWireFrame } from '@gateway/contracts';
import type { Msg } from 'nats';
import { Observable } from 'rxjs';
import { noHeartbeats } from '../testing/no-heartbeats';
import { TextGenerationEndpoint } from './text-generation.endpoint';
import type { TextGenerationService } from './text-generation.service';

/** The endpoint with a NATS connection that records what it publishes, and a generation stub. */
function endpoint(generate: (request: TextGenerationRequest) => Observable<TextFrame>) {
  const published: { subject: string; frame: TextWireFrame }[] = [];
  const connection = {
    nats: { publish: (subject: string, data: string) => published.push({ subject, frame: JSON.parse(data) as TextWireFrame }) },
  } as unknown as JetStreamConnection;
  const shutdown = new GracefulShutdown();
  const served = new TextGenerationEndpoint(connection, { generate } as unknown as TextGenerationService, shutdown, noHeartbeats());
  const message = (payload: unknown): Msg => ({ reply: '_INBOX.test.1', data: new TextEncoder().encode(JSON.stringify(payload)) }) as unknown as Msg;
  return { served, published, shutdown, message };
}

const request = {
  accountId: 'acct_1',
  keyId: 'key_1',
  keyType: 'master',
  maskedKey: 'sk-...abcd',
  ip: '127.0.0.1',
  requestId: 'req_1',
  format: 'chat',
  body: { model: 'sim-chat' },
};

describe('TextGenerationEndpoint', () => {
  it('publishes each frame to the reply subject, then end, counting the request as work until then', () => {
    let emit: ((frame: TextFrame) => void) | undefined;
    let done: (() => void) | undefined;
    const { served, published, shutdown, message } = endpoint(
      () =>
        new Observable<TextFrame>((subscriber) => {
          emit = (frame) => subscriber.next(frame);
          done = () => subscriber.complete();
        }),
    );
    served.handle(message(request));
    expect(shutdown.inFlight).toBe(1);
    emit?.({ kind: 'heartbeat' });
    emit?.({ kind: 'json', status: 200, body: { ok: true } });
    done?.();
    expect(published).toEqual([
      { subject: '_INBOX.test.1', frame: { kind: 'heartbeat' } },
      { subject: '_INBOX.test.1', frame: { kind: 'json', status: 200, body: { ok: true } } },
      { subject: '_INBOX.test.1', frame: { kind: 'end' } },
    ]);
    expect(shutdown.inFlight).toBe(0);
  });

  it('drops unknown properties and hands the service the request as sent', () => {
    const seen: TextGenerationRequest[] = [];
    const { served, message } = endpoint((r) => {
      seen.push(r);
      return new Observable<TextFrame>((subscriber) => subscriber.complete());
    });
    served.handle(message({ ...request, fromANewerEdge: true }));
    expect(seen).toEqual([request]);
  });

  it.each([
    [{ ...request, accountId: undefined }, 'accountId', 'accountId is required'],
    [{ ...request, requestId: 'x'.repeat(129) }, 'requestId', 'requestId must NOT have more than 128 characters'],
    [{ ...request, keyType: 'root' }, 'keyType', 'keyType must be one of master, proxy, dev'],
    [{ ...request, reservedOutputTokens: 1.5 }, 'reservedOutputTokens', 'reservedOutputTokens must be integer'],
  ])('refuses an invalid payload with one error frame naming the field (%#)', (payload, param, text) => {
    const generate = jest.fn();
    const { served, published, shutdown, message } = endpoint(generate);
    served.handle(message(payload));
    expect(published).toEqual([{ subject: '_INBOX.test.1', frame: { kind: 'error', error: { code: 'invalid_request', message: text, param } } }]);
    expect(generate).not.toHaveBeenCalled();
    expect(shutdown.inFlight).toBe(0);
  });

  it('refuses a payload that is not a JSON object', () => {
    const { served, published, message } = endpoint(jest.fn());
    served.handle(message([1, 2]));
    expect(published).toEqual([
      { subject: '_INBOX.test.1', frame: { kind: 'error', error: { code: 'invalid_request', message: 'The inference.text payload must be object' } } },
    ]);
  });

  it('turns an unexpected failure into an internal error frame without its message', () => {
    const { served, published, shutdown, message } = endpoint(() => new Observable<TextFrame>((subscriber) => subscriber.error(new Error('secret detail'))));
    jest.spyOn(served['logger'], 'error').mockImplementation(() => undefined);
    served.handle(message(request));
    expect(published).toEqual([{ subject: '_INBOX.test.1', frame: { kind: 'error', error: { code: 'internal_error', message: 'Internal error' } } }]);
    expect(shutdown.inFlight).toBe(0);
  });

  it("answers a request wrapped by Nest's NATS client (an edge of the previous release) in Nest's reply format", () => {
    const { served, published, message } = endpoint(
      () =>
        new Observable<TextFrame>((subscriber) => {
          subscriber.next({ kind: 'json', status: 200, body: { ok: true } });
          subscriber.complete();
        }),
    );
    served.handle(message({ pattern: 'inference.text', data: request, id: 'nest-1' }));
    served.handle(message({ pattern: 'inference.text', data: { ...request, keyId: '' }, id: 'nest-2' }));
    expect(published.map((entry) => entry.frame)).toEqual([
      { id: 'nest-1', response: { kind: 'json', status: 200, body: { ok: true } } },
      { id: 'nest-1', isDisposed: true },
      { id: 'nest-2', err: { code: 'invalid_request', message: 'keyId must NOT have fewer than 1 characters', param: 'keyId' } },
    ]);
  });

  it('ignores a message without a reply subject', () => {
    const generate = jest.fn();
    const { served, published } = endpoint(generate);
    served.handle({ data: new TextEncoder().encode(JSON.stringify(request)) } as unknown as Msg);
    expect(published).toEqual([]);
    expect(generate).not.toHaveBeenCalled();
  });
});
