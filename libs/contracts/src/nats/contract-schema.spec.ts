import Ajv from 'ajv';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { TextGenerationRequest } from '../inference/text-generation.messages';
import { contractSchema } from './contract-schema';
import { RPC_CONTRACTS } from './rpc-table';

const validate = new Ajv({ removeAdditional: 'all', strict: false }).compile(contractSchema(TextGenerationRequest));

const valid = {
  accountId: 'acct_1',
  keyId: 'key_1',
  keyType: 'proxy',
  maskedKey: 'sk-...abcd',
  ip: '10.0.0.1',
  requestId: 'req_1',
  clientRequestId: 'mine-1',
  format: 'messages',
  body: { model: 'sim-chat' },
  reservedOutputTokens: 16,
};

/** Each case changes one field of a valid request; the DTO's verdict is the expected one. */
const cases: [string, Record<string, unknown>][] = [
  ['valid', valid],
  ['no optional fields', { ...valid, clientRequestId: undefined, reservedOutputTokens: undefined }],
  ['optional fields null', { ...valid, clientRequestId: null, reservedOutputTokens: null }],
  ['accountId empty', { ...valid, accountId: '' }],
  ['accountId too long', { ...valid, accountId: 'a'.repeat(65) }],
  ['keyId missing', { ...valid, keyId: undefined }],
  ['keyType unknown', { ...valid, keyType: 'root' }],
  ['maskedKey a number', { ...valid, maskedKey: 4 }],
  ['ip missing', { ...valid, ip: undefined }],
  ['requestId too long', { ...valid, requestId: 'r'.repeat(129) }],
  ['clientRequestId empty', { ...valid, clientRequestId: '' }],
  ['format unknown', { ...valid, format: 'xml' }],
  ['body an array', { ...valid, body: [] }],
  ['body a string', { ...valid, body: 'hi' }],
  ['reservedOutputTokens 0', { ...valid, reservedOutputTokens: 0 }],
  ['reservedOutputTokens fractional', { ...valid, reservedOutputTokens: 1.5 }],
  ['reservedOutputTokens a string', { ...valid, reservedOutputTokens: '16' }],
];

describe('contractSchema (generated from the DTO)', () => {
  it.each(cases)('judges a TextGenerationRequest as its DTO does: %s', (_name, payload) => {
    const plain = JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
    const dtoErrors = validateSync(plainToInstance(TextGenerationRequest, plain), { whitelist: true, forbidUnknownValues: true });
    expect(validate(JSON.parse(JSON.stringify(payload)))).toBe(dtoErrors.length === 0);
  });

  it('drops properties it does not know, as the DTO whitelist did', () => {
    const payload = { ...valid, extra: true };
    expect(validate(payload)).toBe(true);
    expect(payload).not.toHaveProperty('extra');
  });

  it('compiles for every contract of the table', () => {
    const ajv = new Ajv({ removeAdditional: 'all', strict: false });
    for (const contract of RPC_CONTRACTS) if (contract.request) expect(() => ajv.compile(contractSchema(contract.request!))).not.toThrow();
  });
});
