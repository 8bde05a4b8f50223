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
