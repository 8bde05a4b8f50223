import { Prisma } from '@gateway/db';
import { usedInCurrentWindow } from './key-records';

describe('usedInCurrentWindow', () => {
  const used = new Prisma.Decimal('2.5');
  const now = new Date('2030-01-15T10:00:00Z'); // a Tuesday

  it('is the stored amount while the window it was counted in is the current one', () => {
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'daily', windowStartedAt: new Date('2030-01-15T00:00:00Z') }, now)).toBe(2.5);
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'weekly', windowStartedAt: new Date('2030-01-14T00:00:00Z') }, now)).toBe(2.5);
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'monthly', windowStartedAt: new Date('2030-01-01T00:00:00Z') }, now)).toBe(2.5);
  });

  it('is 0 once a new window has begun, before anything is charged in it', () => {
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'daily', windowStartedAt: new Date('2030-01-14T00:00:00Z') }, now)).toBe(0);
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'weekly', windowStartedAt: new Date('2030-01-07T00:00:00Z') }, now)).toBe(0);
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'monthly', windowStartedAt: new Date('2029-12-01T00:00:00Z') }, now)).toBe(0);
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: 'daily', windowStartedAt: null }, now)).toBe(0);
  });

  it('a key without a window has one lifetime amount', () => {
    expect(usedInCurrentWindow({ usedAmount: used, spendWindow: null, windowStartedAt: null }, now)).toBe(2.5);
  });
});
