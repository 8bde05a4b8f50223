import { usageEvent } from './usage.events';

describe('usageEvent', () => {
  const caller = { requestId: 'req_1', accountId: 'acct_1', keyId: 'key_1', keyType: 'proxy' as const, maskedKey: 'ek-p...abcd', ip: '10.0.0.1' };

  it('is the caller the edge authenticated plus what the request used, stamped in Unix seconds', () => {
    const before = Math.floor(Date.now() / 1000);
    const event = usageEvent(
      { ...caller, clientRequestId: 'client-7' },
      { model: 'm', route: 'messages', inputTokens: 3, outputTokens: 5, status: 'cancelled' },
    );
    expect(event).toEqual({
      ...caller,
      clientRequestId: 'client-7',
      model: 'm',
      route: 'messages',
      inputTokens: 3,
      outputTokens: 5,
      status: 'cancelled',
      timestamp: expect.any(Number),
    });
    expect(event.timestamp).toBeGreaterThanOrEqual(before);
  });

  it('leaves clientRequestId out when the client sent none', () => {
    expect(usageEvent(caller, { model: 'm', route: 'chat.completions', inputTokens: 0, outputTokens: 0, status: 'error' })).not.toHaveProperty(
      'clientRequestId',
    );
  });
});
