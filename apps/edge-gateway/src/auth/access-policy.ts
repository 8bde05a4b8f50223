import { DEV_MODEL_SUFFIX, KeyType, Principal, ProxyKeyMessages } from '@gateway/contracts';
import { IpAllowlist } from './ip-allowlist';
import { DomainError, ErrorCode } from '@gateway/errors';

/** Suffixes that change how a model is called, not which model it is. */
const MODEL_MODIFIERS = [':reasoning-exclude'];

export function baseModelId(model: string): string {
  const modifier = MODEL_MODIFIERS.find((suffix) => model.endsWith(suffix));
  return modifier ? model.slice(0, -modifier.length) : model;
}

export interface AccessContext {
  ip: string;
  /** The model the request names, if any. */
  model?: string;
  /**
   * Whether a whitelist entry names that model; by default the entry equals its id without
   * modifiers. (The decision model answers to several aliases.)
   */
  listedAs?: (entry: string) => boolean;
  nowSeconds: number;
}

export type ProxyRefusal = { reason: 'inactive' | 'expired'; message: string } | { reason: 'model' | 'ip'; message: string };

/** The proxy-key checks, in order: enabled, unexpired, model whitelisted, caller IP allowed. */
export function checkProxyKey(rules: NonNullable<Principal['proxy']>, ipAllowlist: IpAllowlist, context: AccessContext): ProxyRefusal | null {
  if (!rules.isActive) return { reason: 'inactive', message: ProxyKeyMessages.inactive };
  if (rules.expiresAt !== null && context.nowSeconds >= rules.expiresAt) {
    return { reason: 'expired', message: ProxyKeyMessages.expired };
  }
  if (context.model !== undefined && rules.modelWhitelist.length > 0) {
    const model = baseModelId(context.model);
    const listed = context.listedAs ?? ((entry: string) => entry === model);
    if (!rules.modelWhitelist.some(listed)) return { reason: 'model', message: ProxyKeyMessages.modelNotAllowed(context.model) };
  }
  if (!ipAllowlist.isEmpty && !ipAllowlist.allows(context.ip)) return { reason: 'ip', message: ProxyKeyMessages.ipNotAllowed };
  return null;
}

/** Coding-plan (`:dev`) models take DevPass keys only, and DevPass keys take only those models. */
export function checkModelForKeyType(keyType: KeyType, model: string): string | null {
  const isDevModel = baseModelId(model).endsWith(DEV_MODEL_SUFFIX);
  if (keyType === 'dev' && !isDevModel) {
    return `DevPass (ek-dev-) keys can only use coding-plan models (ids ending in ${DEV_MODEL_SUFFIX}); '${model}' is not one`;
  }
  if (keyType !== 'dev' && isDevModel) {
    return `Model '${model}' is a coding-plan model and requires a DevPass (ek-dev-) key`;
  }
  return null;
}

/** Throws the refusal the guard answers with: 401 for a disabled or expired key, 403 for a scope miss. */
export function assertAccess(principal: Principal, ipAllowlist: IpAllowlist, context: AccessContext): void {
  if (principal.proxy) {
    const refusal = checkProxyKey(principal.proxy, ipAllowlist, context);
    if (refusal) {
      const code = refusal.reason === 'inactive' || refusal.reason === 'expired' ? ErrorCode.Unauthenticated : ErrorCode.Forbidden;
      throw new DomainError(code, refusal.message, refusal.reason === 'model' ? 'model' : undefined);
    }
  }
  if (context.model !== undefined) {
    const problem = checkModelForKeyType(principal.keyType, context.model);
    if (problem) throw new DomainError(ErrorCode.Forbidden, problem, 'model');
  }
}
