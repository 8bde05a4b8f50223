import { Body, Controller, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication, RouteConfig } from '@nestjs/platform-fastify';
import { HttpExceptionFilter } from '../errors/http-exception.filter';
import { registerJsonBodyParser } from '../http/json-body.parser';
import { OwnPrototypeCheck } from './body-policy.decorator';
import { ErrorFormat } from './error-format.decorator';

@Controller('keys')
@ErrorFormat('detail')
class KeysFixtureController {
  @Post()
  create(@Body() body: unknown): unknown {
    return body;
  }

  @Post('anthropic')
  @ErrorFormat('anthropic')
  anthropic(): unknown {
    return {};
  }
}

@Controller()
class PlainFixtureController {
  @Post('plain')
  plain(@Body() body: unknown): unknown {
    return body;
  }

  @Post('own-check')
  @OwnPrototypeCheck()
  @ErrorFormat('anthropic')
  // Nest's own decorator replaces the config, so it goes below (runs before) ours.
  @RouteConfig({ note: 'kept' })
  ownCheck(@Body() body: unknown): unknown {
    return { keys: Object.keys(body as object) };
  }
}

@Module({ controllers: [KeysFixtureController, PlainFixtureController] })
class FixtureModule {}

describe('route policy declared by decorator, read before and after Nest', () => {
  let app: NestFastifyApplication;
  const configs = new Map<string, unknown>();

  beforeAll(async () => {
    const adapter = new FastifyAdapter();
    adapter.getInstance().addHook('onRoute', (route) => void configs.set(`${String(route.method)} ${route.url}`, route.config));
    registerJsonBodyParser(adapter.getInstance(), 1024);
    app = await NestFactory.create<NestFastifyApplication>(FixtureModule, adapter, { logger: false, bodyParser: false });
    app.useGlobalFilters(new HttpExceptionFilter());
    app.setGlobalPrefix('v1');
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(() => app.close());

  const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
    app
      .getHttpAdapter()
      .getInstance()
      .inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', ...headers } });

  it("answers Fastify's own errors (invalid JSON, a body too large, 415) in the route's format", async () => {
    const invalid = await post('/v1/keys', '{bad');
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toEqual({ detail: 'Request body is not valid JSON' });

    const tooLarge = await post('/v1/keys/anthropic', JSON.stringify({ text: 'x'.repeat(2048) }));
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });

    const unsupported = await post('/v1/plain', '<a/>', { 'content-type': 'application/xml' });
    expect(unsupported.statusCode).toBe(415);
    expect(unsupported.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });

  it("lets a handler's format win over its controller's, and defaults to OpenAI's", async () => {
    expect((await post('/v1/keys/anthropic', '{bad')).json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect((await post('/v1/plain', '{bad')).json()).toEqual({
      error: { message: 'Request body is not valid JSON', type: 'invalid_request_error', code: 'invalid_request', param: null },
    });
  });

  it('lets `__proto__` keys through only to routes that check them themselves, keeping other route config', async () => {
    const body = '{"__proto__": {"polluted": true}, "a": 1}';
    expect((await post('/v1/plain', body)).statusCode).toBe(400);
    const own = await post('/v1/own-check', body);
    expect(own.statusCode).toBe(201);
    expect(own.json()).toEqual({ keys: ['__proto__', 'a'] });
    expect(configs.get('POST /v1/own-check')).toEqual({ note: 'kept', errorFormat: 'anthropic', ownPrototypeCheck: true });
  });

  it('answers a request that matched no route in the shape of the family its path belongs to', async () => {
    const get = (url: string) => app.getHttpAdapter().getInstance().inject({ method: 'GET', url });
    expect((await get('/v1/auth/nothing')).json()).toMatchObject({ detail: expect.any(String) });
    expect((await get('/v1/messages/nothing')).json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect((await get('/v1/nothing')).json()).toMatchObject({ error: { type: 'not_found_error' } });
  });
});
