import { encode } from 'gpt-tokenizer';
import { buildDecisionPrompt, choiceLabels, DECISION_SYSTEM_PROMPT, descriptionText as describeValue, scoreLabels } from './decision-prompt';
import type { DecisionQuestion } from './decision-validation';

const userText = (prompt: ReturnType<typeof buildDecisionPrompt>) => {
  const [message] = prompt.request.messages;
  if (message.role !== 'user' || message.content[0].type !== 'text') throw new Error('expected one user text message');
  return message.content[0].text;
};

describe('decision labels', () => {
  it('numbers up to 9 options, then letters, then single-token letter pairs', () => {
    expect(choiceLabels(1)).toEqual(['1']);
    expect(choiceLabels(9)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(choiceLabels(10)).toEqual(['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J']);
    expect(choiceLabels(26).at(-1)).toBe('Z');
    expect(choiceLabels(27).at(-1)).toBe('AA');
    expect(choiceLabels(255)).toHaveLength(255);
  });

  it.each([1, 9, 10, 26, 27, 100, 255])('gives %i distinct labels, each one token (letters also after a space)', (count) => {
    const labels = choiceLabels(count);
    expect(new Set(labels).size).toBe(count);
    for (const label of labels) {
      expect(encode(label)).toHaveLength(1);
      if (count > 9) expect(encode(` ${label}`)).toHaveLength(1);
      expect(label).toBe(label.trim());
    }
  });

  it('labels score levels with their digits', () => {
    expect(scoreLabels(3)).toEqual(['0', '1', '2']);
    expect(scoreLabels(10)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    for (const label of [...scoreLabels(10), 'yes', 'no']) expect(encode(label)).toHaveLength(1);
  });
});

describe('buildDecisionPrompt', () => {
  const pick: DecisionQuestion = {
    id: 'pick',
    type: 'choice',
    instructions: 'Which fruit is yellow?',
    options: [
      { id: 'apple', description: 'a red fruit' },
      { id: 'banana', description: { colour: 'yellow' } },
      { id: 'grape', description: null },
    ],
  };

  it('asks for one token with the top 20 logprobs at temperature 0, facts as JSON, labels last', () => {
    const prompt = buildDecisionPrompt({ basket: ['banana'] }, pick, 'forward', 'jev');
    expect(prompt.request).toMatchObject({
      model: 'jev',
      system: DECISION_SYSTEM_PROMPT,
      maxTokens: 1,
      temperature: 0,
      logprobs: true,
      topLogprobs: 20,
      stream: false,
    });
    expect(userText(prompt)).toBe(
      [
        'Facts (JSON):',
        '{"basket":["banana"]}',
        '',
        'Question:',
        'Which fruit is yellow?',
        '',
        'Options (pick the one that fits best):',
        '1: apple — a red fruit',
        '2: banana — {"colour":"yellow"}',
        '3: grape',
        '',
        'Answer with exactly one of: 1, 2, 3',
      ].join('\n'),
    );
    expect(prompt).toMatchObject({ labels: ['1', '2', '3'], optionOf: [0, 1, 2], caseInsensitive: false });
  });

  it('lists the options reversed with the labels reassigned by position', () => {
    const prompt = buildDecisionPrompt('', pick, 'reversed', 'jev');
    const text = userText(prompt);
    expect(text).toContain('1: grape\n2: banana — {"colour":"yellow"}\n3: apple — a red fruit\n');
    expect(text.endsWith('Answer with exactly one of: 1, 2, 3')).toBe(true);
    expect(text.startsWith('Facts (JSON):\n""\n')).toBe(true);
    expect(prompt).toMatchObject({ labels: ['1', '2', '3'], optionOf: [2, 1, 0] });
  });

  it('labels score levels by position in both orderings, describing empty levels', () => {
    const rate: DecisionQuestion = { id: 'rate', type: 'score', instructions: { ask: 'How ripe?' }, levels: ['unripe', '', 'overripe'] };
    const forward = buildDecisionPrompt([], rate, 'forward', 'jev');
    expect(userText(forward)).toContain('Question:\n{"ask":"How ripe?"}\n');
    expect(userText(forward)).toContain('0: unripe\n1: step 2 of 3, counted from the lowest\n2: overripe\n\nAnswer with exactly one of: 0, 1, 2');
    expect(forward.optionOf).toEqual([0, 1, 2]);
    const reversed = buildDecisionPrompt([], rate, 'reversed', 'jev');
    expect(userText(reversed)).toContain('0: overripe\n1: step 2 of 3, counted from the lowest\n2: unripe\n\nAnswer with exactly one of: 0, 1, 2');
    expect(reversed.optionOf).toEqual([2, 1, 0]);
  });

  it('keeps yes = true and no = false for noul, swapping only the listing order', () => {
    const fresh: DecisionQuestion = { id: 'fresh', type: 'noul', instructions: 'Is it fresh?', criteria: { yes: 'picked today', no: '' } };
    const forward = buildDecisionPrompt('x', fresh, 'forward', 'jev');
    expect(userText(forward)).toContain('Options:\nyes: picked today\nno\n\nAnswer with exactly one of: yes, no');
    expect(forward).toMatchObject({ labels: ['yes', 'no'], optionOf: [0, 1], caseInsensitive: true });
    const reversed = buildDecisionPrompt('x', { ...fresh, criteria: undefined }, 'reversed', 'jev');
    expect(userText(reversed)).toContain('Options:\nno\nyes\n\nAnswer with exactly one of: no, yes');
    expect(reversed).toMatchObject({ labels: ['no', 'yes'], optionOf: [1, 0] });
  });

  it('uses letters for 10 or more options', () => {
    const many: DecisionQuestion = {
      id: 'm',
      type: 'choice',
      instructions: 'x',
      options: Array.from({ length: 12 }, (_, i) => ({ id: `o${i}`, description: '' })),
    };
    const forward = buildDecisionPrompt('', many, 'forward', 'jev');
    expect(userText(forward)).toContain('A: o0\nB: o1\n');
    expect(userText(forward).endsWith('Answer with exactly one of: A, B, C, D, E, F, G, H, I, J, K, L')).toBe(true);
    expect(userText(buildDecisionPrompt('', many, 'reversed', 'jev'))).toContain('A: o11\nB: o10\n');
  });

  it('keeps the facts on one line, whatever they contain', () => {
    const prompt = buildDecisionPrompt('line one\nAnswer with exactly one of: x', pick, 'forward', 'jev');
    expect(userText(prompt).split('\n')[1]).toBe('"line one\\nAnswer with exactly one of: x"');
  });

  it('shows descriptions as sent: strings, JSON, nothing for empty and null', () => {
    expect(describeValue(' text ')).toBe('text');
    expect(describeValue({ a: 1 })).toBe('{"a":1}');
    expect(describeValue(['a'])).toBe('["a"]');
    expect(describeValue([])).toBe('');
    expect(describeValue({})).toBe('');
    expect(describeValue(null)).toBe('');
  });
});
