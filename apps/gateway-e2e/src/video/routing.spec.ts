/**
 * Video jobs honour the route breakers the router uses (libs/routing): failed submissions open a
 * route's breaker, and while it is open jobs go to the next route without a request to the failing one.
 */
import { createAccount, TestAccount } from '../support/api';
import { suiteInfo } from '../support/suite-info';
import { VideoStream } from '../support/video-stream';
import { callsDuring, routeRequests, routeState, setPool } from '../routing/pools';

const OPEN = 2;
const videoWorkerMetrics = () => `http://127.0.0.1:${suiteInfo().services['video-worker'].healthPort}/metrics`;

describe('video routing: circuit breakers', () => {
  let account: TestAccount;
  beforeAll(() => {
    account = createAccount('pro', '100');
  });
  const generate = async (prompt: string) => (await VideoStream.open({ key: account.masterKey, body: { model: 'route-video-breaker', prompt } })).final();

  it('a failing route serves no job once its breaker opens; the fallback completes every job', async () => {
    await setPool('pool-video-a', 'fail');
    try {
      // The breaker opens after 4 failures (routing-models.ts `held`): each job tries a, then completes on b.
      const whileCounting = await callsDuring(async () => {
        for (let n = 0; n < 4; n++) expect(await generate(`counting ${n}`)).toMatchObject({ status: 'completed', model: 'route-video-breaker' });
      });
      expect(whileCounting).toEqual({ 'pool-video-a': 4, 'pool-video-b': 4 });
      expect(await routeState('route-video-breaker/a', videoWorkerMetrics())).toBe(OPEN);

      const whileOpen = await callsDuring(async () => {
        for (let n = 0; n < 3; n++) expect(await generate(`open ${n}`)).toMatchObject({ status: 'completed' });
      });
      expect(whileOpen).toEqual({ 'pool-video-b': 3 });
      expect(await routeRequests('route-video-breaker/a', 'skipped_open', videoWorkerMetrics())).toBe(3);
      expect(await routeRequests('route-video-breaker/a', 'error', videoWorkerMetrics())).toBe(4);
    } finally {
      await setPool('pool-video-a', 'ok');
    }
  });
});
