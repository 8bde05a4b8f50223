import { parseEnv } from '@gateway/platform';
import { join } from 'node:path';
import { EdgeEnv } from '../config/edge.env';
import { createEdgeHttp } from './edge-http';

describe('the edge HTTP server', () => {
  it("keeps idle connections as long as Fastify's own server would (longer than a load balancer's 60 s)", async () => {
    const env = parseEnv(EdgeEnv, { MODELS_CONFIG: join(__dirname, '../../../../config/models.yaml'), FILE_URL_SECRET: 'x'.repeat(32) });
    const fastify = createEdgeHttp(env).adapter.getInstance();
    try {
      expect(fastify.server.keepAliveTimeout).toBe(72_000);
      expect(fastify.server.keepAliveTimeout).toBeGreaterThan(60_000);
    } finally {
      await fastify.close();
    }
  });
});
