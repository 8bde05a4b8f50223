import { Principal, ProxyKeyRules } from '@gateway/contracts';
import { assertAccess, baseModelId, checkModelForKeyType, checkProxyKey } from './access-policy';
import { IpAllowlist } from './ip-allowlist';
import { DomainError, ErrorCode } from '@gateway/errors';

const rules = (overrides: Partial<ProxyKeyRules> = {}): ProxyKeyRules => ({
  isActive: true,
  expiresAt: null,
  modelWhitelist: [],
  ipWhitelist: [],
  allocatedAmount: '5',
  spendWindow: null,
  budgets: [],
  enabledThinking: false,
  ...overrides,
});
const open = new IpAllowlist([]);
const now = 1_800_000_000;

describe('checkProxyKey', () => {
  it('grants an active, unexpired key with empty whitelists', () => {
    expect(checkProxyKey(rules(), open, { ip: '1.2.3.4', model: 'any', nowSeconds: now })).toBeNull();
  });

  it('refuses in order: inactive, expired, model, IP', () => {
    const everythingWrong = rules({ isActive: false, expiresAt: now - 1, modelWhitelist: ['a'] });
    const closed = new IpAllowlist(['10.0.0.0/8']);
    expect(checkProxyKey(everythingWrong, closed, { ip: '1.1.1.1', model: 'b', nowSeconds: now })?.message).toBe('Proxy key is inactive');
    expect(checkProxyKey({ ...everythingWrong, isActive: true }, closed, { ip: '1.1.1.1', model: 'b', nowSeconds: now })?.message).toBe(
      'Proxy key has expired',
    );
    expect(checkProxyKey({ ...everythingWrong, isActive: true, expiresAt: null }, closed, { ip: '1.1.1.1', model: 'b', nowSeconds: now })?.message).toBe(
      "Model 'b' not in whitelist",
    );
    expect(checkProxyKey(rules(), closed, { ip: '1.1.1.1', nowSeconds: now })?.message).toBe('IP address not in whitelist');
  });

  it('treats the expiry second itself as expired', () => {
    expect(checkProxyKey(rules({ expiresAt: now }), open, { ip: '::1', nowSeconds: now })?.reason).toBe('expired');
    expect(checkProxyKey(rules({ expiresAt: now + 1 }), open, { ip: '::1', nowSeconds: now })).toBeNull();
  });

  it('compares the model without the :reasoning-exclude modifier', () => {
    expect(baseModelId('m:reasoning-exclude')).toBe('m');
    expect(checkProxyKey(rules({ modelWhitelist: ['m'] }), open, { ip: '::1', model: 'm:reasoning-exclude', nowSeconds: now })).toBeNull();
  });

  it('names the model as the request sent it when refusing it', () => {
    expect(checkProxyKey(rules({ modelWhitelist: ['m'] }), open, { ip: '::1', model: 'x:reasoning-exclude', nowSeconds: now })?.message).toBe(
      "Model 'x:reasoning-exclude' not in whitelist",
    );
  });

  it('lets the caller say which whitelist entries name the model (aliases)', () => {
    const listedAs = (entry: string) => entry === 'jev' || entry === 'jev-latest';
    expect(checkProxyKey(rules({ modelWhitelist: ['jev-latest'] }), open, { ip: '::1', model: 'jev', listedAs, nowSeconds: now })).toBeNull();
    expect(checkProxyKey(rules({ modelWhitelist: ['other'] }), open, { ip: '::1', model: 'jev', listedAs, nowSeconds: now })?.reason).toBe('model');
  });
});

describe('DevPass model rule', () => {
  it('keeps :dev models for DevPass keys and DevPass keys for :dev models', () => {
    expect(checkModelForKeyType('dev', 'coder:dev')).toBeNull();
    expect(checkModelForKeyType('dev', 'gpt-4o')).toMatch(/only use coding-plan models/);
    expect(checkModelForKeyType('master', 'coder:dev')).toMatch(/requires a DevPass/);
    expect(checkModelForKeyType('proxy', 'coder:dev')).toMatch(/requires a DevPass/);
    expect(checkModelForKeyType('master', 'gpt-4o')).toBeNull();
  });
});

describe('assertAccess', () => {
  const principal = (keyType: Principal['keyType'], proxy: ProxyKeyRules | null = null): Principal => ({
    keyId: 'key_1',
    keyType,
    accountId: 'acct_1',
    plan: 'pro',
    maskedKey: 'ek-...0000',
    proxy,
  });
  const codeOf = (run: () => void): ErrorCode | undefined => {
    try {
      run();
    } catch (error) {
      return (error as DomainError).code;
    }
    return undefined;
  };

  it('answers 401-class for disabled or expired keys and 403-class for scope misses', () => {
    const context = { ip: '1.1.1.1', nowSeconds: now };
    expect(codeOf(() => assertAccess(principal('proxy', rules({ isActive: false })), open, context))).toBe(ErrorCode.Unauthenticated);
    expect(codeOf(() => assertAccess(principal('proxy', rules({ expiresAt: 1 })), open, context))).toBe(ErrorCode.Unauthenticated);
    expect(codeOf(() => assertAccess(principal('proxy', rules()), new IpAllowlist(['10.0.0.0/8']), context))).toBe(ErrorCode.Forbidden);
    expect(codeOf(() => assertAccess(principal('dev'), open, { ...context, model: 'gpt-4o' }))).toBe(ErrorCode.Forbidden);
    expect(codeOf(() => assertAccess(principal('master'), open, { ...context, model: 'gpt-4o' }))).toBeUndefined();
  });
});
