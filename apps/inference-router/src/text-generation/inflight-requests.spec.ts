import { EARLY_CANCEL_TTL_MS, InflightRequests } from './inflight-requests';

describe('InflightRequests', () => {
  afterEach(() => jest.useRealTimers());

  it('aborts a request it serves when its cancel arrives', () => {
    const inflight = new InflightRequests();
    const controller = inflight.register('r1');
    expect(inflight.cancel('r1')).toBe(true);
    expect(controller.signal.aborted).toBe(true);
  });

  it('a cancel that overtakes its request aborts the request as soon as it is registered', () => {
    const inflight = new InflightRequests();
    expect(inflight.cancel('r2')).toBe(false);
    expect(inflight.register('r2').signal.aborted).toBe(true);
    // remembered once only: the same id registered again (a retry) is not aborted
    inflight.release('r2');
    expect(inflight.register('r2').signal.aborted).toBe(false);
  });

  it('a request sent again under the same id stays cancellable when its first sending finishes', () => {
    const inflight = new InflightRequests();
    const first = inflight.register('r3');
    const second = inflight.register('r3');
    inflight.release('r3', first);
    expect(inflight.cancel('r3')).toBe(true);
    expect(second.signal.aborted).toBe(true);
    inflight.release('r3', second);
    expect(inflight.size).toBe(0);
  });

  it('forgets a cancel for a request it never serves after EARLY_CANCEL_TTL_MS', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const inflight = new InflightRequests();
    inflight.cancel('elsewhere');
    jest.setSystemTime(1_000_000 + EARLY_CANCEL_TTL_MS);
    inflight.cancel('another'); // pruning happens as cancels arrive
    expect(inflight.register('elsewhere').signal.aborted).toBe(false);
    expect(inflight.register('another').signal.aborted).toBe(true);
  });

  it('a request it does not know about is not aborted by an unrelated cancel', () => {
    const inflight = new InflightRequests();
    inflight.cancel('someone-else');
    expect(inflight.register('mine').signal.aborted).toBe(false);
  });
});
