import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { LogsQuery } from './accounts/account.messages';
import { isIpOrCidr } from './validation';

describe('isIpOrCidr', () => {
  it.each(['10.0.0.1', '127.0.0.1', '::1', '2001:db8::1', '::ffff:10.0.0.1', '10.0.0.0/8', '192.168.1.0/24', 'fe80::/10', '0.0.0.0/0', '::/0'])(
    'accepts %s',
    (value) => expect(isIpOrCidr(value)).toBe(true),
  );

  it.each([
    '10',
    '127.1',
    '0x7f.1',
    '127001',
    '01.2.3.4',
    '10/8',
    '10.0.0.0/33',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    '10.0.0.0/x',
    'localhost',
    '',
    ' 10.0.0.1',
    '::1/129',
  ])('refuses %p', (value) => expect(isIpOrCidr(value)).toBe(false));
});

describe('IntegerParam', () => {
  const check = (query: Record<string, string>) => validateSync(plainToInstance(LogsQuery, query)).map((error) => error.property);

  it('takes decimal digits as the number they write', () => {
    const query = plainToInstance(LogsQuery, { since: '1000', until: '253402300799', limit: '10' });
    expect(query).toMatchObject({ since: 1000, until: 253402300799, limit: 10 });
    expect(validateSync(query)).toEqual([]);
  });

  it.each([['1e3'], ['0x3e8'], [' 1000'], ['1000.0'], [''], ['+1000'], ['Infinity']])('refuses %j, naming the parameter', (text) => {
    expect(check({ since: text })).toEqual(['since']);
  });

  it('leaves a negative number to the parameter minimum', () => {
    expect(check({ since: '-1' })).toEqual(['since']);
  });
});
