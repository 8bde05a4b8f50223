'use strict';
/**
 * Large prompts for the 16 KB scenario: English-like prose (sentences of common words, with
 * punctuation and paragraphs, so a BPE tokenizer sees text of realistic density, about 4–5 bytes per
 * token) that differs from one request to the next, so no cache on the path (a token count keyed by
 * text, a memoised serialisation) can flatter a target.
 *
 * `bigPromptBodies()` precomputes a pool of distinct prompts from a seeded generator (the same pool
 * every run) and returns a function giving the next request body: the next prompt of the pool,
 * prefixed with a request counter, so no two requests of a run carry the same text even after the
 * pool wraps around.
 */

const WORDS = (
  'the of and to in is that it was for on are as with his they at be this from have or by one had not but what all were when we there can an ' +
  'your which their said if do will each about how up out them then she many some so these would other into has more her two like him see time ' +
  'could no make than first been its who now people my made over did down only way find use may water long little very after words called just ' +
  'where most know get through back much before go good new write our used me man too any day same right look think also around another came ' +
  'come work three word must because does part even place well such here take why things help put years different away again off went old ' +
  'number great tell men say small every found still between name should home big give air line set own under read last never us left end ' +
  'along while might next sound below saw something thought both few those always looked show large often together asked house world going ' +
  'want school important until form food keep children feet land side without boy once animals life enough took sometimes four head above ' +
  'kind began almost live page got earth need far hand high year mother light parts country father let night following picture being study ' +
  'second eyes soon times story boys since white days ever paper hard near sentence better best across during today others however sure means ' +
  'knew try told young miles sun ways thing whole hear example heard several change answer room sea against top turned learn point city play ' +
  'toward five using himself usually money seen car morning given body family later order move became field river report service budget ' +
  'request gateway model token stream answer question summary document section table figure result method system process network server'
).split(' ');

/** A small deterministic generator (mulberry32), so the pool is the same every run. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentence(next) {
  const length = 6 + Math.floor(next() * 14);
  const words = [];
  for (let i = 0; i < length; i++) words.push(WORDS[Math.floor(next() * WORDS.length)]);
  if (length > 10 && next() < 0.5) words[Math.floor(length / 2)] += ',';
  words[0] = words[0][0].toUpperCase() + words[0].slice(1);
  return `${words.join(' ')}${next() < 0.1 ? '?' : '.'}`;
}

/** About `bytes` bytes (UTF-8, all ASCII) of prose in paragraphs. */
function prose(bytes, seed) {
  const next = random(seed);
  const paragraphs = [];
  let size = 0;
  while (size < bytes) {
    const sentences = [];
    const count = 3 + Math.floor(next() * 5);
    for (let i = 0; i < count && size < bytes; i++) {
      const text = sentence(next);
      sentences.push(text);
      size += text.length + 1;
    }
    paragraphs.push(sentences.join(' '));
    size += 1;
  }
  return paragraphs.join('\n\n').slice(0, bytes);
}

/**
 * @param {object} options
 * @param {string} options.model the model of every request
 * @param {number} options.bytes the prompt's size (the user message's text)
 * @param {number} [options.pool] distinct prompts to rotate through
 * @returns {{ next: () => string, sample: string, promptBytes: number, pool: number }}
 */
function bigPromptBodies({ model, bytes, pool = 64 }) {
  const prompts = [];
  for (let i = 0; i < pool; i++) prompts.push(prose(bytes, 0x5eed + i));
  let counter = 0;
  const body = (i) =>
    JSON.stringify({
      model,
      messages: [
        { role: 'system', content: 'You are a terse assistant. Summarise the document in one sentence.' },
        { role: 'user', content: `Document ${i}:\n\n${prompts[i % pool]}` },
      ],
      max_tokens: 16,
    });
  return { next: () => body(counter++), sample: body(0), promptBytes: bytes, pool };
}

/** The small prompt of every non-streaming row (and of the probes), for `model`. */
const MESSAGES = [
  { role: 'system', content: 'You are a terse assistant.' },
  { role: 'user', content: 'Say hello.' },
];
const chatBody = (model, stream) => JSON.stringify({ model, messages: MESSAGES, max_tokens: 16, ...(stream ? { stream: true } : {}) });

module.exports = { bigPromptBodies, chatBody, prose };
