import { api } from './support/api';

describe('the base URL', () => {
  it('answers GET / and HEAD / with 200 without a key (a probe some clients send first)', async () => {
    const get = await api('GET', '/');
    expect(get.status).toBe(200);
    expect(get.body).toEqual({ status: 'ok', service: 'edge-gateway' });
    const head = await api('HEAD', '/');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('is not an API route: /v1 itself still needs a key or is unknown', async () => {
    expect((await api('GET', '/v1/models')).status).toBe(401);
  });
});
