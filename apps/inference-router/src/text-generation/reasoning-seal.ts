/**
 * The gateway's `encrypted_content` for Responses reasoning items (docs/api.md, "Encrypted
 * reasoning"): stateless clients (`store: false`) send it back on the next turn, and it must give
 * back to any upstream the reasoning the model did: its whole text and the upstream's own proof
 * of it (an Anthropic thinking block's signature), which Anthropic needs to accept it again.
 *
 * AES-256-GCM seals it, so a client can neither read nor forge it; the account id is the associated
 * data, so another account cannot replay it. The format, `gwr1.` + base64url(nonce ‖ ciphertext ‖
 * tag) over the deflated JSON `{t, s?}`, starts with its version so a later one can be told apart.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { ThinkingPart } from '@gateway/canonical';
import type { ReasoningSeal } from '@gateway/client-formats';
import { DomainError, ErrorCode } from '@gateway/errors';

const VERSION = 'gwr1';
const PREFIX = `${VERSION}.`;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const SEAL_KEY_BYTES = 32;

/** What is sealed, in short names: the reasoning text and, when the upstream signed it, its signature. */
interface Sealed {
  t: string;
  s?: string;
}

export class ReasoningSealer {
  /**
   * `keys[0]` seals; every key opens, so a rotated-out key (REASONING_SEAL_KEYS) still opens what
   * clients hold from before the rotation.
   */
  constructor(private readonly keys: Buffer[]) {
    if (keys.length === 0 || keys.some((key) => key.length !== SEAL_KEY_BYTES)) throw new Error(`reasoning seal keys must be ${SEAL_KEY_BYTES} bytes`);
  }

  /** The seal for one account's requests. */
  forAccount(accountId: string): ReasoningSeal {
    const aad = Buffer.from(`${VERSION}:${accountId}`);
    return {
      seal: (reasoning) => this.seal(reasoning, aad),
      unseal: (content, param) => this.unseal(content, aad, param),
    };
  }

  private seal(reasoning: ThinkingPart, aad: Buffer): string {
    const sealed: Sealed = reasoning.signature === undefined ? { t: reasoning.text } : { t: reasoning.text, s: reasoning.signature };
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0], nonce).setAAD(aad);
    const body = Buffer.concat([cipher.update(deflateRawSync(JSON.stringify(sealed))), cipher.final()]);
    return PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  private unseal(content: string, aad: Buffer, param: string): ThinkingPart {
    // Anything else (OpenAI's own `gAAAA…`, a later version) was not sealed by this gateway's format.
    if (!content.startsWith(PREFIX)) refuse(param, 'was not produced by this gateway (unknown format or version)');
    const raw = Buffer.from(content.slice(PREFIX.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES + 1) refuse(param, 'is truncated');
    const nonce = raw.subarray(0, NONCE_BYTES);
    const body = raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    for (const key of this.keys) {
      const plain = open(key, nonce, body, tag, aad);
      if (plain) return thinking(plain, param);
    }
    return refuse(param, 'cannot be opened: it was altered, or sealed for another account or with a key this gateway no longer has');
  }
}

/** The plaintext, or undefined when the tag does not check out under this key. */
function open(key: Buffer, nonce: Buffer, body: Buffer, tag: Buffer, aad: Buffer): Buffer | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce).setAAD(aad).setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch {
    return undefined;
  }
}

function thinking(plain: Buffer, param: string): ThinkingPart {
  let sealed: Partial<Sealed>;
  try {
    sealed = JSON.parse(inflateRawSync(plain).toString('utf8')) as Partial<Sealed>;
  } catch {
    return refuse(param, 'cannot be read');
  }
  // Authenticated, so ours; checked anyway, as a later version's shape must not pass for this one.
  if (typeof sealed.t !== 'string' || (sealed.s !== undefined && typeof sealed.s !== 'string')) refuse(param, 'cannot be read');
  return sealed.s === undefined ? { type: 'thinking', text: sealed.t } : { type: 'thinking', text: sealed.t, signature: sealed.s };
}

function refuse(param: string, problem: string): never {
  throw new DomainError(ErrorCode.InvalidRequest, `${param}: ${problem}`, param);
}

/** The sealer of the configured keys (32 bytes each, base64 or base64url: Node reads both alphabets): the current one first. */
export function reasoningSealer(current: string, previous: string[]): ReasoningSealer {
  return new ReasoningSealer([current, ...previous].map((key) => Buffer.from(key, 'base64')));
}
