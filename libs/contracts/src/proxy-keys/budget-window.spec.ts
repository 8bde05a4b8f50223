import { budgetWindowsProblem, parsePeriod, toBudgetWindowSpecs } from './budget-window';

describe('budget window grammar', () => {
  it('knows rolling durations from 30m to 90d and the calendar units', () => {
    expect(parsePeriod('5h')).toEqual({ kind: 'rolling', lengthMs: 5 * 3_600_000, granularityMs: 60_000 });
    expect(parsePeriod('30m')).toMatchObject({ kind: 'rolling' });
    expect(parsePeriod('90d')).toMatchObject({ kind: 'rolling', granularityMs: 3_600_000 });
    expect(parsePeriod('quarterly')).toEqual({ kind: 'calendar', unit: 'quarterly' });
    for (const period of ['29m', '91d', '0h', '5H', '1w', '05h', 'yearly', '', 5]) expect(parsePeriod(period)).toBeNull();
  });

  it.each([
    [[{ amount: 1, period: '3x' }], 'budgets[0].period must be a rolling duration'],
    [
      [
        { amount: 1, period: '5h' },
        { amount: 2, period: '5h' },
      ],
      "budgets[1].period: '5h' is listed twice",
    ],
    [[{ amount: 1, period: 'daily', timezone: 'Mars/Olympus' }], 'budgets[0].timezone must be an IANA time zone name'],
    // Node.js 22+ takes an offset as a zone; an IANA name it is not.
    [[{ amount: 1, period: 'daily', timezone: '+05:30' }], 'budgets[0].timezone must be an IANA time zone name'],
    [[{ amount: 1, period: 'daily', timezone: '-0800' }], 'budgets[0].timezone must be an IANA time zone name'],
    [[{ amount: -1, period: 'daily' }], 'budgets[0].amount must not be less than 0'],
    [[{ amount: 0.123456789, period: 'daily' }], 'budgets[0].amount must have at most 8 decimal places'],
    [[{ amount: '1', period: 'daily' }], 'budgets[0].amount must be a number'],
    [[{ amount: 1, period: 'daily', window: 'x' }], 'budgets[0].window is not a budget field'],
    [Array.from({ length: 9 }, (_, index) => ({ amount: 1, period: `${index + 1}h` })), 'budgets may hold at most 8 windows, got 9'],
    [{ amount: 1 }, 'budgets must be an array'],
  ])('refuses %j naming the field', (value, message) => {
    expect(budgetWindowsProblem(value)).toContain(message);
  });

  it('accepts up to 8 distinct windows', () => {
    const windows = [
      { amount: 1, period: '5h' },
      { amount: 3, period: 'weekly', timezone: 'Europe/Berlin' },
      { amount: 0, period: 'daily', timezone: 'Asia/Kolkata' },
      { amount: 0.00000001, period: 'monthly' },
      { amount: 9, period: 'quarterly' },
      { amount: 9, period: '30m' },
      { amount: 9, period: '90d' },
      { amount: 9, period: '7d' },
    ];
    expect(budgetWindowsProblem(windows)).toBeNull();
  });

  it('stores amounts as plain decimals, the zone filled in', () => {
    expect(
      toBudgetWindowSpecs([
        { amount: 0.00000001, period: '5h' },
        { amount: 0, period: 'daily', timezone: 'Asia/Kolkata' },
        { amount: 1_000_000_000, period: 'weekly' },
        { amount: 2.5, period: 'monthly' },
      ]),
    ).toEqual([
      { period: '5h', timezone: 'UTC', amount: '0.00000001' },
      { period: 'daily', timezone: 'Asia/Kolkata', amount: '0' },
      { period: 'weekly', timezone: 'UTC', amount: '1000000000' },
      { period: 'monthly', timezone: 'UTC', amount: '2.5' },
    ]);
  });
});
