import { api } from './support/api';
import { suiteInfo } from './support/suite-info';

describe('health and request ids', () => {
  it('answers /healthz and /readyz without a key', async () => {
    const alive = await api('GET', '/healthz');
    expect(alive.status).toBe(200);
    expect(alive.body).toEqual({ status: 'ok' });
    const ready = await api('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      ready: true,
      checks: { redis: 'up', 'key-service': 'up', 'account-service': 'up' },
    });
  });

  it('returns an x-request-id on every response, echoing a sane one from the client', async () => {
    const generated = await api('GET', '/v1/auth/proxy');
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    const echoed = await api('GET', '/healthz', { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
    const refused = await api('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(refused.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('answers unknown routes with 404 in the OpenAI error shape', async () => {
    const response = await api('GET', '/v1/nope', { base: suiteInfo().edgeB });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      error: { message: expect.any(String), type: 'not_found_error', code: null, param: null },
    });
  });
});
