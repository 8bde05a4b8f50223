import { classifyLedgerError, sqlState } from './ledger-errors';

/** A failed raw query as Prisma 7 with @prisma/adapter-pg reports it. */
const prismaError = (cause: Record<string, unknown>, message = 'Raw query failed') =>
  Object.assign(new Error(message), {
    name: 'PrismaClientKnownRequestError',
    code: 'P2010',
    meta: { driverAdapterError: { name: 'DriverAdapterError', cause } },
  });

describe('ledger failures', () => {
  it.each([
    ['22P05', { originalCode: '22P05', kind: 'postgres', code: '22P05' }],
    ['22P02', { originalCode: '22P02', kind: 'InvalidInputValue' }],
    ['22021', { originalCode: '22021', kind: 'postgres', code: '22021' }],
    ['22003', { originalCode: '22003', kind: 'ValueOutOfRange' }],
    ['23502', { originalCode: '23502', kind: 'NullConstraintViolation' }],
  ])('%s is the data: set aside at once', (state, cause) => {
    expect(sqlState(prismaError(cause))).toBe(state);
    expect(classifyLedgerError(prismaError(cause))).toBe('data');
  });

  it.each([
    ['unreachable', prismaError({ kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 }, "Can't reach database server")],
    ['connection closed', prismaError({ kind: 'ConnectionClosed' })],
    ['admin shutdown (57P01)', prismaError({ originalCode: '57P01', kind: 'postgres' })],
    ['too many connections (53300)', prismaError({ originalCode: '53300', kind: 'postgres' })],
    ['deadlock (40P01)', prismaError({ originalCode: '40P01', kind: 'postgres' })],
    ['schema not migrated (42703)', prismaError({ originalCode: '42703', kind: 'postgres' })],
    ['a socket error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a wrapped socket error', new Error('query failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) })],
  ])('%s is the database, not the event', (_, error) => {
    expect(classifyLedgerError(error)).toBe('unavailable');
  });

  it('anything else is of unknown kind (retried a bounded number of times); Prisma codes are not SQLSTATEs', () => {
    expect(classifyLedgerError(prismaError({ originalCode: 'P0001', kind: 'postgres' }))).toBe('other');
    expect(classifyLedgerError(new TypeError('x is undefined'))).toBe('other');
    expect(sqlState(Object.assign(new Error('x'), { name: 'PrismaClientKnownRequestError', code: 'P2002' }))).toBeUndefined();
  });
});
