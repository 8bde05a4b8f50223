export * from './money';
export * from './pricing';
export * from './spend-window';
export * from './budget-store';
export * from './budget-windows';
