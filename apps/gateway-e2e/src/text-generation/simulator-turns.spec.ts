/**
 * The simulator answers the user's turn as agents send it: a system message appended after the
 * user's message (Claude Code does) does not replace it, and a tool result is answered in text,
 * so an agent loop ends instead of calling the same tool again and again.
 */
import { api, createAccount, TestAccount } from '../support/api';
import { chatWeatherTool, messagesWeatherTool, openaiClient } from '../support/clients';

describe('simulator: which turn it answers', () => {
  let account: TestAccount;

  beforeAll(() => {
    account = createAccount('pro', '10');
  });

  it('chat: a trailing system message does not stop the tool call the user asked for', async () => {
    const completion = await openaiClient(account.masterKey).chat.completions.create({
      model: 'sim-chat',
      tools: [chatWeatherTool],
      messages: [
        { role: 'user', content: 'Use get_weather for Oslo please' },
        { role: 'system', content: 'Reminder: keep answers short.' },
      ],
    });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
  });

  it('messages: answers the user, not the system text after it', async () => {
    const response = await api('POST', '/v1/messages', {
      key: account.masterKey,
      body: {
        model: 'sim-chat',
        max_tokens: 200,
        messages: [
          { role: 'user', content: 'Tell me about lighthouses' },
          { role: 'system', content: 'Reminder: the user is on a phone.' },
        ],
      },
    });
    expect(response.status).toBe(200);
    const text = response.body.content[0].text as string;
    expect(text).toContain('You said: "Tell me about lighthouses"');
    expect(text).not.toContain('Reminder');
  });

  it('messages: a tool result (with a reminder beside it naming the tool) is answered in text, with no second call', async () => {
    const response = await api('POST', '/v1/messages', {
      key: account.masterKey,
      body: {
        model: 'sim-chat',
        max_tokens: 300,
        tools: [messagesWeatherTool],
        messages: [
          { role: 'user', content: 'Use get_weather for Oslo please' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Cloudy, 4 degrees' },
              { type: 'text', text: '<system-reminder>get_weather is available</system-reminder>' },
            ],
          },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(response.body.stop_reason).toBe('end_turn');
    expect(response.body.content).toEqual([{ type: 'text', text: expect.stringContaining('The get_weather tool returned: "Cloudy, 4 degrees"') }]);
  });
});
