import { contractSchema, RpcContract } from '@gateway/contracts';
import Ajv, { type ValidateFunction } from 'ajv';

const ajv = new Ajv({ removeAdditional: 'all', allErrors: false, strict: false });
const compiled = new Map<RpcContract['request'], ValidateFunction>();

/**
 * The payload validator of a contract, compiled once from the JSON schema generated from its DTO.
 * Unknown properties are dropped (as the class-validator whitelist does), so a newer caller is not
 * refused for them. No class-transformer: the handler gets the parsed JSON.
 */
export function payloadValidator(contract: RpcContract | undefined): ValidateFunction | undefined {
  const dto = contract?.request;
  if (!dto) return undefined;
  let validate = compiled.get(dto);
  if (!validate) {
    validate = ajv.compile(contractSchema(dto));
    compiled.set(dto, validate);
  }
  return validate;
}
