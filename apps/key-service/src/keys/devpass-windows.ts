import { BudgetWindowSpec, parseDevPassWindows, Plan } from '@gateway/contracts';

/** The token windows each plan gives its DevPass keys (`DEVPASS_TOKEN_WINDOWS`, validated at startup). */
export class DevPassWindows {
  readonly byPlan: Record<Plan, BudgetWindowSpec[]>;

  constructor(value: string) {
    const parsed = parseDevPassWindows(value);
    if ('problem' in parsed) throw new Error(`DEVPASS_TOKEN_WINDOWS: ${parsed.problem}`);
    this.byPlan = parsed.windows;
  }
}
