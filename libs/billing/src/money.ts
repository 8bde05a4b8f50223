/**
 * Money in the budget's Redis figures: integer nano-credits (1e-9 credit). The ledger in PostgreSQL
 * keeps exact decimals (see pricing.ts); a reservation is an upper bound, rounded up.
 */
export const NANO_PER_CREDIT = 1_000_000_000;

/** Credits (a decimal string, or a number) as integer nano-credits, rounded up (a reservation or charge is never understated). */
export function toNano(credits: string | number): number {
  const [whole, fraction = ''] = String(credits).split('.');
  const digits = (fraction + '000000000').slice(0, 9);
  const rest = fraction.slice(9).replace(/0+$/, '');
  const sign = whole.startsWith('-') ? -1 : 1;
  const nano = Math.abs(Number(whole)) * NANO_PER_CREDIT + Number(digits);
  return sign * (nano + (rest && sign > 0 ? 1 : 0));
}

/**
 * A worst-case estimate in (float) credits as the nano-credits to reserve: rounded up, at least one.
 * The epsilon keeps float noise (0.00009 * 1e9 = 90000.00000000001) from rounding a whole nano up.
 */
export function reservationNano(worstCaseCredits: number): number {
  return Math.max(1, Math.ceil(worstCaseCredits * NANO_PER_CREDIT - 1e-6));
}

/** Nano-credits as credits for a message: up to nine decimals, no trailing zeros. */
export function formatNano(nano: number): string {
  return (nano / NANO_PER_CREDIT).toFixed(9).replace(/\.?0+$/, '');
}
