import { formatNano, NANO_PER_CREDIT, reservationNano, toNano } from './money';

describe('nano-credits', () => {
  it('toNano reads decimal credits exactly, rounding digits past the ninth up (never understating a charge)', () => {
    expect(toNano('0')).toBe(0);
    expect(toNano(10)).toBe(10 * NANO_PER_CREDIT);
    expect(toNano('1.234567891')).toBe(1_234_567_891);
    expect(toNano('0.0000000011')).toBe(2);
    expect(toNano('0.000000001000')).toBe(1);
    expect(toNano('123456.000000000')).toBe(123_456 * NANO_PER_CREDIT);
    expect(toNano('-1.5')).toBe(-1_500_000_000);
  });

  it('reservationNano rounds a float estimate up to a whole nano-credit, at least one, without float noise', () => {
    expect(reservationNano(0.00009)).toBe(90_000);
    expect(reservationNano(0.0000000001)).toBe(1);
    expect(reservationNano(0)).toBe(1);
    expect(reservationNano(1.0000000012)).toBe(1_000_000_002);
  });

  it('formatNano writes credits with up to nine decimals and no trailing zeros', () => {
    expect(formatNano(1_500_000_000)).toBe('1.5');
    expect(formatNano(2 * NANO_PER_CREDIT)).toBe('2');
    expect(formatNano(1)).toBe('0.000000001');
  });
});
