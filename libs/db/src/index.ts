export * from './prisma.service';
export * from './prisma.module';
export * from './migrate';
export { Prisma } from './generated/prisma/client';
export type { Account, ApiKey } from './generated/prisma/client';
export { KeyType as DbKeyType, Plan as DbPlan, SpendWindow as DbSpendWindow } from './generated/prisma/enums';
export * from './window-spend';
