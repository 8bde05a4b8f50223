/**
 * Who may call which model: coding-plan (`:dev`) models and DevPass keys only go together, a proxy
 * key is held to its model whitelist, and a disabled proxy key is refused.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, createDevPass, createProxyKey, TestAccount } from '../support/api';
import { anthropicClient, openaiClient } from '../support/clients';

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => {
      throw new Error('expected the call to be refused');
    },
    (error: unknown) => error,
  );
}

const hello = [{ role: 'user' as const, content: 'Hello' }];

describe('model access by key type', () => {
  let account: TestAccount;
  let devKey: string;

  beforeAll(() => {
    account = createAccount('pro', '100');
    devKey = createDevPass(account.accountId);
  });

  describe('DevPass and coding-plan models', () => {
    it('refuses sim-coder:dev to a master key with 403 naming the model', async () => {
      const error = await rejection(openaiClient(account.masterKey).chat.completions.create({ model: 'sim-coder:dev', messages: hello }));
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(error.status).toBe(403);
      expect(error.error).toMatchObject({ type: 'permission_error', param: 'model', message: expect.stringContaining("'sim-coder:dev'") });
      expect(error.message).toMatch(/DevPass/);

      const messagesError = await rejection(anthropicClient(account.masterKey).messages.create({ model: 'sim-coder:dev', max_tokens: 50, messages: hello }));
      expect(messagesError).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect(messagesError.error).toEqual({ type: 'error', error: { type: 'permission_error', message: expect.stringContaining('sim-coder:dev') } });
    });

    it('serves sim-coder:dev to a DevPass key in all three formats', async () => {
      const completion = await openaiClient(devKey).chat.completions.create({ model: 'sim-coder:dev', messages: hello });
      expect(completion.model).toBe('sim-coder:dev');
      expect(completion.choices[0].message.content!.length).toBeGreaterThan(0);
      const response = await openaiClient(devKey).responses.create({ model: 'sim-coder:dev', input: 'Hello' });
      expect(response.status).toBe('completed');
      const message = await anthropicClient(devKey).messages.create({ model: 'sim-coder:dev', max_tokens: 200, messages: hello });
      expect(message.stop_reason).toBe('end_turn');
    });

    it('refuses a DevPass key on sim-chat with 403', async () => {
      const error = await rejection(openaiClient(devKey).chat.completions.create({ model: 'sim-chat', messages: hello }));
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(error.error).toMatchObject({ param: 'model', message: expect.stringContaining("'sim-chat'") });
      const messagesError = await rejection(anthropicClient(devKey).messages.create({ model: 'sim-chat', max_tokens: 50, messages: hello }));
      expect(messagesError).toBeInstanceOf(Anthropic.PermissionDeniedError);
    });
  });

  describe('proxy keys', () => {
    it("refuses a model outside the key's whitelist with 403 naming the model, and serves the whitelisted one", async () => {
      const proxy = await createProxyKey(account.masterKey, { model_whitelist: ['sim-chat'] });
      const client = openaiClient(proxy.key);
      const error = await rejection(client.chat.completions.create({ model: 'fake-openai', messages: hello }));
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(error.status).toBe(403);
      expect(error.error).toMatchObject({ message: "Model 'fake-openai' not in whitelist", param: 'model' });

      const messagesError = await rejection(anthropicClient(proxy.key).messages.create({ model: 'sim-reasoner', max_tokens: 50, messages: hello }));
      expect(messagesError).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect(messagesError.error.error.message).toBe("Model 'sim-reasoner' not in whitelist");

      expect((await client.chat.completions.create({ model: 'sim-chat', messages: hello })).choices[0].finish_reason).toBe('stop');
      // Modifiers are not separate models: sim-chat:reasoning-exclude is sim-chat.
      expect((await client.responses.create({ model: 'sim-chat:reasoning-exclude', input: 'Hello' })).status).toBe('completed');
    });

    it('refuses an inactive proxy key with 401 on every text route', async () => {
      const proxy = await createProxyKey(account.masterKey);
      expect((await openaiClient(proxy.key).chat.completions.create({ model: 'sim-chat', messages: hello })).object).toBe('chat.completion');
      const toggled = await api('POST', '/v1/auth/proxy/toggle', { key: account.masterKey, body: { proxy_key: proxy.key } });
      expect(toggled.body.status).toBe(false);

      const chatError = await rejection(openaiClient(proxy.key).chat.completions.create({ model: 'sim-chat', messages: hello }));
      expect(chatError).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(chatError.status).toBe(401);
      expect(chatError.error).toMatchObject({ message: 'Proxy key is inactive', type: 'authentication_error' });
      const responsesError = await rejection(openaiClient(proxy.key).responses.create({ model: 'sim-chat', input: 'Hello' }));
      expect(responsesError).toBeInstanceOf(OpenAI.AuthenticationError);
      const messagesError = await rejection(anthropicClient(proxy.key).messages.create({ model: 'sim-chat', max_tokens: 50, messages: hello }));
      expect(messagesError).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(messagesError.error).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'Proxy key is inactive' } });
      const modelsError = await rejection(openaiClient(proxy.key).models.list());
      expect(modelsError).toBeInstanceOf(OpenAI.AuthenticationError);
    });
  });
});
