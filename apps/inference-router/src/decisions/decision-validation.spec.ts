import type { KeyType } from '@gateway/contracts';
import { countTokens } from '@gateway/providers';
import { countDecisionTokens, validateDecisionRequest } from './decision-validation';
import { DomainError } from '@gateway/errors';

const VENDOR = 'systemone';
const validate = (body: unknown, keyType: KeyType = 'master', maxInputTokens?: number) =>
  validateDecisionRequest(body, { keyType, vendor: VENDOR, maxInputTokens });

/** The refusal of `body`, or a failure when it is accepted. */
function refusal(body: unknown, keyType: KeyType = 'master', maxInputTokens?: number) {
  try {
    validate(body, keyType, maxInputTokens);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { status: error.status, code: error.code, param: error.param, message: error.message };
  }
  throw new Error(`accepted: ${JSON.stringify(body)}`);
}

const noul = { type: 'noul', instructions: 'Is it fresh?' };
const choice = (criteria: unknown) => ({ type: 'choice', instructions: 'Which one?', criteria });
const score = (criteria: unknown) => ({ type: 'score', instructions: 'How much?', criteria });
const withQuestions = (questions: unknown) => ({ state: '', questions });
const one = (question: unknown) => withQuestions({ q: question });
const options = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`o${i}`, `option ${i}`]));

describe('validateDecisionRequest', () => {
  describe('model', () => {
    it.each([undefined, 'jev', 'jev-latest', 'systemone/jev', 'systemone/jev-latest'])('accepts %p as the current jev', (model) => {
      expect(validate({ model, state: '', questions: { q: noul } }).model).toBe('jev');
    });

    it('uses the vendor it is given for the prefixed aliases', () => {
      const body = { model: 'acme/jev-latest', state: '', questions: { q: noul } };
      expect(validateDecisionRequest(body, { keyType: 'master', vendor: 'acme' }).model).toBe('jev');
      expect(refusal(body)).toMatchObject({ code: 'model_not_supported', param: 'model' });
    });

    it.each(['jev-2025-01-01', 'jev-1', 'jev-latest-2', 'systemone/jev-2025-01-01', 'systemone/jev-v2'])('refuses the pinned version %p', (model) => {
      const result = refusal({ model, state: '', questions: { q: noul } });
      expect(result).toMatchObject({ status: 400, code: 'model_version_not_served', param: 'model' });
      expect(result.message).toMatch(/only the current version is served/);
    });

    it.each(['gpt-4o', '', 'JEV', 'jev-', 'other/jev', 'systemone/other', 'systemone/', 'systemone/systemone/jev', 'jev:reasoning-exclude'])(
      'refuses %p as unsupported',
      (model) => {
        expect(refusal({ model, state: '', questions: { q: noul } })).toMatchObject({ status: 400, code: 'model_not_supported', param: 'model' });
      },
    );

    it.each([null, 5, true, ['jev'], { id: 'jev' }])('refuses a non-string model %p', (model) => {
      expect(refusal({ model, state: '', questions: { q: noul } })).toMatchObject({ code: 'invalid_type', param: 'model' });
    });

    it('makes proxy keys send model, and only proxy keys', () => {
      const body = { state: '', questions: { q: noul } };
      expect(refusal(body, 'proxy')).toMatchObject({ status: 400, code: 'missing_required_parameter', param: 'model' });
      expect(validate({ ...body, model: 'jev' }, 'proxy').model).toBe('jev');
      expect(validate(body, 'master').model).toBe('jev');
      expect(validate(body, 'dev').model).toBe('jev');
    });
  });

  describe('refusals name the field', () => {
    const cases: [string, unknown, string | undefined, string][] = [
      ['body not an object', [], undefined, 'invalid_body'],
      ['body null', null, undefined, 'invalid_body'],
      ['state missing', { questions: { q: noul } }, 'state', 'missing_required_parameter'],
      ['state number', { state: 5, questions: { q: noul } }, 'state', 'invalid_type'],
      ['state boolean', { state: false, questions: { q: noul } }, 'state', 'invalid_type'],
      ['state null', { state: null, questions: { q: noul } }, 'state', 'invalid_type'],
      ['questions missing', { state: '' }, 'questions', 'missing_required_parameter'],
      ['questions empty', withQuestions({}), 'questions', 'invalid_value'],
      ['questions array', withQuestions([noul]), 'questions', 'invalid_type'],
      ['questions empty array', withQuestions([]), 'questions', 'invalid_type'],
      ['questions string', withQuestions('q'), 'questions', 'invalid_type'],
      ['questions null', withQuestions(null), 'questions', 'invalid_type'],
      ['empty question id', withQuestions({ '': noul }), 'questions.', 'invalid_value'],
      ['question not an object', one('Is it?'), 'questions.q', 'invalid_type'],
      ['question null', one(null), 'questions.q', 'invalid_type'],
      ['question array', one([noul]), 'questions.q', 'invalid_type'],
      ['type missing', one({ instructions: 'x' }), 'questions.q.type', 'missing_required_parameter'],
      ['type unknown', one({ type: 'rank', instructions: 'x' }), 'questions.q.type', 'invalid_value'],
      ['type case-sensitive', one({ type: 'Choice', instructions: 'x', criteria: { a: 'a' } }), 'questions.q.type', 'invalid_value'],
      ['type not a string', one({ type: 1, instructions: 'x' }), 'questions.q.type', 'invalid_value'],
      ['instructions missing', one({ type: 'noul' }), 'questions.q.instructions', 'missing_required_parameter'],
      ['instructions number', one({ type: 'noul', instructions: 3 }), 'questions.q.instructions', 'invalid_type'],
      ['instructions null', one({ type: 'noul', instructions: null }), 'questions.q.instructions', 'invalid_type'],
      ['instructions boolean', one({ type: 'noul', instructions: true }), 'questions.q.instructions', 'invalid_type'],
      // choice
      ['choice criteria missing', one({ type: 'choice', instructions: 'x' }), 'questions.q.criteria', 'missing_required_parameter'],
      ['choice criteria array', one(choice(['a', 'b'])), 'questions.q.criteria', 'invalid_type'],
      ['choice criteria string', one(choice('a')), 'questions.q.criteria', 'invalid_type'],
      ['choice criteria null', one(choice(null)), 'questions.q.criteria', 'invalid_type'],
      ['choice criteria empty', one(choice({})), 'questions.q.criteria', 'invalid_value'],
      ['choice 256 options', one(choice(options(256))), 'questions.q.criteria', 'invalid_value'],
      ['choice description number', one(choice({ a: 'fine', b: 5 })), 'questions.q.criteria.b', 'invalid_type'],
      ['choice description boolean', one(choice({ a: false })), 'questions.q.criteria.a', 'invalid_type'],
      ['choice description, dotted option id', one(choice({ 'x.y': 1 })), 'questions.q.criteria.x.y', 'invalid_type'],
      // score
      ['score criteria missing', one({ type: 'score', instructions: 'x' }), 'questions.q.criteria', 'missing_required_parameter'],
      ['score criteria string', one(score('low')), 'questions.q.criteria', 'invalid_type'],
      ['score criteria null', one(score(null)), 'questions.q.criteria', 'invalid_type'],
      ['score criteria empty array', one(score([])), 'questions.q.criteria', 'invalid_value'],
      ['score criteria empty object', one(score({})), 'questions.q.criteria', 'invalid_value'],
      ['score 11 levels', one(score(Array.from({ length: 11 }, (_, i) => `level ${i}`))), 'questions.q.criteria', 'invalid_value'],
      [
        'score 11 levels as object',
        one(score(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [String(i), 'x'])))),
        'questions.q.criteria',
        'invalid_value',
      ],
      ['score object with a gap', one(score({ 0: 'a', 2: 'b' })), 'questions.q.criteria', 'invalid_value'],
      ['score object not from 0', one(score({ 1: 'a', 2: 'b' })), 'questions.q.criteria', 'invalid_value'],
      ['score object with another key', one(score({ 0: 'a', 1: 'b', x: 'c' })), 'questions.q.criteria', 'invalid_value'],
      ['score object with a padded key', one(score({ 0: 'a', '01': 'b' })), 'questions.q.criteria', 'invalid_value'],
      ['score object with a negative key', one(score({ '-1': 'a', 0: 'b' })), 'questions.q.criteria', 'invalid_value'],
      ['score level null', one(score(['a', null])), 'questions.q.criteria.1', 'invalid_type'],
      ['score level number', one(score([0, 'b'])), 'questions.q.criteria.0', 'invalid_type'],
      ['score level boolean (object form)', one(score({ 0: 'a', 1: 'b', 2: true })), 'questions.q.criteria.2', 'invalid_type'],
      // noul
      ['noul criteria null', one({ ...noul, criteria: null }), 'questions.q.criteria', 'invalid_type'],
      ['noul criteria array', one({ ...noul, criteria: ['yes', 'no'] }), 'questions.q.criteria', 'invalid_type'],
      ['noul criteria string', one({ ...noul, criteria: 'yes or no' }), 'questions.q.criteria', 'invalid_type'],
      ['noul criteria only true', one({ ...noul, criteria: { true: 'y' } }), 'questions.q.criteria', 'invalid_value'],
      ['noul criteria only false', one({ ...noul, criteria: { false: 'n' } }), 'questions.q.criteria', 'invalid_value'],
      ['noul criteria empty', one({ ...noul, criteria: {} }), 'questions.q.criteria', 'invalid_value'],
      ['noul criteria extra key', one({ ...noul, criteria: { true: 'y', false: 'n', maybe: 'm' } }), 'questions.q.criteria', 'invalid_value'],
      ['noul criteria yes/no keys', one({ ...noul, criteria: { yes: 'y', no: 'n' } }), 'questions.q.criteria', 'invalid_value'],
      ['noul description null', one({ ...noul, criteria: { true: null, false: 'n' } }), 'questions.q.criteria.true', 'invalid_type'],
      ['noul description number', one({ ...noul, criteria: { true: 'y', false: 0 } }), 'questions.q.criteria.false', 'invalid_type'],
      // the first bad question is reported, in request order
      ['second question bad', withQuestions({ a: noul, b: { type: 'noul' } }), 'questions.b.instructions', 'missing_required_parameter'],
    ];

    it.each(cases)('%s → 400 %p', (_name, body, param, code) => {
      expect(refusal(body)).toMatchObject({ status: 400, code, param });
    });

    it('refuses the question id __proto__ as JSON.parse delivers it (an own key), by name', () => {
      const body = JSON.parse('{"state": "", "questions": {"q": {"type": "noul", "instructions": "x"}, "__proto__": {"type": "noul", "instructions": "x"}}}');
      expect(Object.keys(body.questions)).toEqual(['q', '__proto__']);
      expect(refusal(body)).toMatchObject({ status: 400, code: 'invalid_value', param: 'questions.__proto__' });
      // Alone, too: the map is not "empty" to Object.keys.
      expect(refusal(JSON.parse('{"state": "", "questions": {"__proto__": {"type": "noul", "instructions": "x"}}}'))).toMatchObject({
        param: 'questions.__proto__',
      });
    });

    it('does not read inherited properties as question fields', () => {
      expect(refusal(one({ instructions: 'x', constructor: 'y' }))).toMatchObject({ param: 'questions.q.type' });
      expect(refusal(JSON.parse('{"state": "", "questions": {"toString": {"type": "noul"}}}'))).toMatchObject({ param: 'questions.toString.instructions' });
    });

    it('checks a question fully before the next, and everything before the size', () => {
      expect(refusal({ state: 'word '.repeat(40_000), questions: { q: { type: 'noul' } } })).toMatchObject({ param: 'questions.q.instructions' });
    });
  });

  describe('size', () => {
    it('counts JSON.stringify({state, questions}) and refuses more than 32,000 tokens on state', () => {
      const questions = { q: noul };
      const big = { state: 'word '.repeat(40_000), questions };
      const result = refusal(big);
      expect(result).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'state' });
      expect(result.message).toContain('32000');
      expect(countDecisionTokens(big.state, questions)).toBe(countTokens(JSON.stringify({ state: big.state, questions })));
    });

    it('accepts exactly the limit and refuses one more', () => {
      const body = { state: { facts: ['a', 'b'] }, questions: { q: noul }, user: 'ignored' };
      const tokens = countTokens(JSON.stringify({ state: body.state, questions: body.questions }));
      expect(validate(body, 'master', tokens).inputTokens).toBe(tokens);
      expect(refusal(body, 'master', tokens - 1)).toMatchObject({ code: 'context_length_exceeded', param: 'state' });
    });
  });

  describe('valid edge cases', () => {
    const accepted: [string, unknown][] = [
      ['empty string state', { state: '', questions: { q: noul } }],
      ['empty array state', { state: [], questions: { q: noul } }],
      ['empty object state', { state: {}, questions: { q: noul } }],
      ['instructions as object', { state: 'x', questions: { q: { type: 'noul', instructions: { ask: 'fresh?' } } } }],
      ['instructions as empty array', { state: 'x', questions: { q: { type: 'noul', instructions: [] } } }],
      ['null choice description', one(choice({ apple: 'red', grape: null }))],
      ['empty and structured choice descriptions', one(choice({ a: '', b: [], c: {}, d: { colour: 'red' } }))],
      ['one choice option', one(choice({ only: 'the only one' }))],
      ['255 options', one(choice(options(255)))],
      ['score criteria as a gap-free object', one(score({ 0: 'low', 1: 'mid', 2: 'high' }))],
      ['score object in any key order', one(score({ 1: 'mid', 0: 'low' }))],
      ['one level', one(score(['only']))],
      ['10 levels', one(score(Array.from({ length: 10 }, (_, i) => `level ${i}`)))],
      ['empty level descriptions', one(score(['', [], {}]))],
      ['noul without criteria', one(noul)],
      ['noul with criteria', one({ ...noul, criteria: { true: 'fresh', false: '' } })],
      ['noul with structured criteria', one({ ...noul, criteria: { false: [], true: { means: 'fresh' } } })],
      ['other fields ignored', { state: 'x', questions: { q: noul }, user: 'u1', session_id: 's', stream: true, temperature: 2 }],
      ['question fields beyond the three ignored', one({ ...noul, weight: 3 })],
      ['unusual question ids', withQuestions({ 'a.b': noul, ' ': noul, constructor: noul, '0': noul })],
      [
        'choice option id __proto__ (own key)',
        JSON.parse('{"state": "", "questions": {"q": {"type": "choice", "instructions": "x", "criteria": {"__proto__": "a", "b": null}}}}'),
      ],
    ];

    it.each(accepted)('accepts %s', (_name, body) => {
      expect(() => validate(body)).not.toThrow();
    });

    it('returns the questions in request order with what the engine needs', () => {
      const result = validate({
        state: { basket: ['banana'] },
        questions: {
          pick: choice({ apple: 'red', grape: null }),
          rate: score({ 1: 'ripe', 0: 'unripe' }),
          fresh: noul,
          sure: { ...noul, criteria: { false: 'no', true: 'yes' } },
        },
      });
      expect(result.questions).toEqual([
        {
          id: 'pick',
          type: 'choice',
          instructions: 'Which one?',
          options: [
            { id: 'apple', description: 'red' },
            { id: 'grape', description: null },
          ],
        },
        { id: 'rate', type: 'score', instructions: 'How much?', levels: ['unripe', 'ripe'] },
        { id: 'fresh', type: 'noul', instructions: 'Is it fresh?' },
        { id: 'sure', type: 'noul', instructions: 'Is it fresh?', criteria: { yes: 'yes', no: 'no' } },
      ]);
      expect(result.state).toEqual({ basket: ['banana'] });
    });

    it('keeps an own __proto__ option id as an option', () => {
      const body = JSON.parse('{"state": "", "questions": {"q": {"type": "choice", "instructions": "x", "criteria": {"__proto__": "a", "b": null}}}}');
      const [question] = validate(body).questions;
      expect(question).toMatchObject({
        type: 'choice',
        options: [
          { id: '__proto__', description: 'a' },
          { id: 'b', description: null },
        ],
      });
    });
  });
});
