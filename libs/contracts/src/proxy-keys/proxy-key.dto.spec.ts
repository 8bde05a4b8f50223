import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { CreateProxyKeyDto, UpdateProxyKeyDto } from './proxy-key.dto';

const problems = (cls: new () => object, body: object): string[] =>
  validateSync(plainToInstance(cls, body), { whitelist: true, forbidUnknownValues: true }).map((error) => error.property);

const future = () => Math.floor(Date.now() / 1000) + 3600;

describe('CreateProxyKeyDto', () => {
  it('accepts the full record and the minimal one', () => {
    expect(problems(CreateProxyKeyDto, { name: 'a', allocated_ammount: 0 })).toEqual([]);
    expect(
      problems(CreateProxyKeyDto, {
        name: 'x'.repeat(25),
        allocated_ammount: 10.12345678,
        expires_at: future(),
        spend_window: 'monthly',
        model_whitelist: ['gpt-4o'],
        ip_whitelist: ['1.2.3.4', '10.0.0.0/8', '::1', '2001:db8::/32', '::ffff:127.0.0.1'],
        enabled_thinking: true,
      }),
    ).toEqual([]);
    expect(problems(CreateProxyKeyDto, { name: 'a', allocated_ammount: 1, expires_at: -1, spend_window: null })).toEqual([]);
  });

  it('leaves large allocations to the daily-limit rule, which names the limit', () => {
    expect(problems(CreateProxyKeyDto, { name: 'a', allocated_ammount: 1e12 })).toEqual([]);
    expect(problems(CreateProxyKeyDto, { name: 'a', allocated_ammount: 1e308 })).toEqual([]);
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k', allocated_ammount: 1e12 })).toEqual([]);
  });

  it.each([
    ['name over 25 characters', { name: 'x'.repeat(26), allocated_ammount: 1 }, 'name'],
    ['empty name', { name: '', allocated_ammount: 1 }, 'name'],
    ['missing allocation', { name: 'a' }, 'allocated_ammount'],
    ['negative allocation', { name: 'a', allocated_ammount: -1 }, 'allocated_ammount'],
    ['allocation with 9 decimals', { name: 'a', allocated_ammount: 0.123456789 }, 'allocated_ammount'],
    ['allocation as a string', { name: 'a', allocated_ammount: '5' }, 'allocated_ammount'],
    ['expiry in the past', { name: 'a', allocated_ammount: 1, expires_at: 1 }, 'expires_at'],
    ['expiry -2', { name: 'a', allocated_ammount: 1, expires_at: -2 }, 'expires_at'],
    ['expiry null', { name: 'a', allocated_ammount: 1, expires_at: null }, 'expires_at'],
    ['unknown window', { name: 'a', allocated_ammount: 1, spend_window: 'yearly' }, 'spend_window'],
    ['CIDR prefix too long', { name: 'a', allocated_ammount: 1, ip_whitelist: ['1.2.3.4/33'] }, 'ip_whitelist'],
    ['not an address', { name: 'a', allocated_ammount: 1, ip_whitelist: ['example.com'] }, 'ip_whitelist'],
    ['whitelist null', { name: 'a', allocated_ammount: 1, model_whitelist: null }, 'model_whitelist'],
    // PostgreSQL cannot store these: a 400 here, not a failed write (a 500) in key-service.
    ['NUL in the name', { name: 'a\u0000b', allocated_ammount: 1 }, 'name'],
    ['lone surrogate in the name', { name: 'a\ud800', allocated_ammount: 1 }, 'name'],
    ['NUL in a whitelisted model', { name: 'a', allocated_ammount: 1, model_whitelist: ['gpt\u0000'] }, 'model_whitelist'],
  ])('rejects %s', (_case, body, field) => {
    expect(problems(CreateProxyKeyDto, body)).toContain(field);
  });
});

describe('UpdateProxyKeyDto', () => {
  it('needs proxy_key of 1 to 256 characters and nothing else', () => {
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k' })).toEqual([]);
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k'.repeat(256) })).toEqual([]);
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k'.repeat(257) })).toEqual(['proxy_key']);
    expect(problems(UpdateProxyKeyDto, {})).toEqual(['proxy_key']);
  });

  it('refuses a key reference PostgreSQL cannot store, and takes emoji', () => {
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k\u0000' })).toEqual(['proxy_key']);
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k\udc00' })).toEqual(['proxy_key']);
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k', name: 'ok \ud83d\ude00' })).toEqual([]);
  });

  it('lets spend_window be cleared with null but not a name', () => {
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k', spend_window: null })).toEqual([]);
    expect(problems(UpdateProxyKeyDto, { proxy_key: 'k', name: null })).toEqual(['name']);
  });
});
