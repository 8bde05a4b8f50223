import { randomBytes } from 'node:crypto';
import { DomainError } from '@gateway/errors';
import { ReasoningSealer, reasoningSealer } from './reasoning-seal';

const PARAM = 'input.0.encrypted_content';
const reasoning = { type: 'thinking' as const, text: 'The user wants 6 × 7. That is 42.', signature: 'EqQBCkYIBxgCKkB-anthropic-signature' };

/** The 400 an unseal throws: its `param` and message, as the client's error body carries them. */
function refusal(open: () => unknown): { status: number; param?: string; message: string } {
  try {
    open();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { status: error.status, param: error.param, message: error.message };
  }
  throw new Error('unsealed');
}

/** `content` with one byte of its payload flipped. */
function flipped(content: string, at: number): string {
  const [prefix, payload] = content.split('.');
  const bytes = Buffer.from(payload, 'base64url');
  bytes[at] ^= 1;
  return `${prefix}.${bytes.toString('base64url')}`;
}

describe('ReasoningSealer', () => {
  const key = randomBytes(32);
  const sealer = new ReasoningSealer([key]);
  const account = sealer.forAccount('acct-a');

  it('gives back the reasoning text and the upstream signature it sealed, and the text alone when there was no signature', () => {
    expect(account.unseal(account.seal(reasoning), PARAM)).toEqual(reasoning);
    expect(account.unseal(account.seal({ type: 'thinking', text: 'plain' }), PARAM)).toEqual({ type: 'thinking', text: 'plain' });
  });

  it('is opaque: versioned, different each time, and without the text in it', () => {
    const one = account.seal(reasoning);
    const two = account.seal(reasoning);
    expect(one).toMatch(/^gwr1\.[A-Za-z0-9_-]+$/);
    expect(one).not.toBe(two);
    expect(Buffer.from(one.slice(5), 'base64url').toString('latin1')).not.toContain('42');
  });

  it('stays compact: long reasoning is deflated before it is sealed', () => {
    const long = { type: 'thinking' as const, text: 'Let me think about the next step again. '.repeat(200) };
    expect(account.seal(long).length).toBeLessThan(long.text.length / 4);
  });

  it('refuses content altered anywhere (nonce, ciphertext, tag) with a 400 naming the field', () => {
    const sealed = account.seal(reasoning);
    const length = Buffer.from(sealed.slice(5), 'base64url').length;
    for (const at of [0, 20, length - 1]) {
      expect(refusal(() => account.unseal(flipped(sealed, at), PARAM))).toEqual({
        status: 400,
        param: PARAM,
        message: expect.stringMatching(/^input\.0\.encrypted_content: cannot be opened/),
      });
    }
  });

  it('refuses truncated content', () => {
    const sealed = account.seal(reasoning);
    expect(refusal(() => account.unseal(sealed.slice(0, -4), PARAM))).toMatchObject({ status: 400, param: PARAM });
    expect(refusal(() => account.unseal('gwr1.AAAA', PARAM))).toEqual({ status: 400, param: PARAM, message: `${PARAM}: is truncated` });
  });

  it("refuses another account's content: the account is bound to what was sealed", () => {
    const other = sealer.forAccount('acct-b');
    expect(refusal(() => other.unseal(account.seal(reasoning), PARAM))).toMatchObject({ status: 400, param: PARAM });
  });

  it('refuses content sealed under another key, and opens it once that key is kept for a rotation (REASONING_SEAL_KEYS)', () => {
    const oldKey = randomBytes(32);
    const sealedBefore = new ReasoningSealer([oldKey]).forAccount('acct-a').seal(reasoning);
    expect(refusal(() => account.unseal(sealedBefore, PARAM))).toMatchObject({ status: 400, param: PARAM });
    const rotated = reasoningSealer(key.toString('base64'), [oldKey.toString('base64url')]).forAccount('acct-a');
    expect(rotated.unseal(sealedBefore, PARAM)).toEqual(reasoning);
    // The current key seals: a sealer without the old key opens what the rotated one seals now.
    expect(account.unseal(rotated.seal(reasoning), PARAM)).toEqual(reasoning);
  });

  it('refuses an unknown version or format, such as OpenAI’s own encrypted content', () => {
    const sealed = account.seal(reasoning);
    for (const content of [`gwr2.${sealed.slice(5)}`, 'gAAAAABpF-openai-fernet', '']) {
      expect(refusal(() => account.unseal(content, PARAM))).toEqual({
        status: 400,
        param: PARAM,
        message: `${PARAM}: was not produced by this gateway (unknown format or version)`,
      });
    }
  });
});
