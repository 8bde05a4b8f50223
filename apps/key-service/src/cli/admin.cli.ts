import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { budgetWindowsProblem, BudgetWindow, classifyKey, KeyBudget, maskKey, Plan, Plans } from '@gateway/contracts';
import { DomainError, ErrorCode } from '@gateway/errors';
import { loadEnvOrExit } from '@gateway/platform';
import { parseArgs } from 'node:util';
import { AccountsService } from '../accounts/accounts.service';
import { KeyServiceModule } from '../app.module';
import { KeyServiceEnv } from '../config/key-service.env';
import { KeysService } from '../keys/keys.service';
import { ProxyKeysService } from '../proxy-keys/proxy-keys.service';
import { runUsageCommand } from './usage-dead-letters.command';

const USAGE = `usage: npm run admin -- <command>
  account create --plan <${Plans.join('|')}> --credits <amount>   create an account; prints its id and master key
  account list                                                   list accounts
  account credit --account <id> --amount <amount>                add credits (negative to remove)
  devpass create --account <id>                                  issue a DevPass (ek-dev-) key
  key regen --account <id>                                       issue a new master key (the old one stops working)
  proxy budgets --account <id> --key <ek-proxy-…>                show the proxy key's budgets: the allocation and each
                                                                 budget window, with used, remaining and reset time
  proxy budgets --account <id> --key <ek-proxy-…> --set '<json>' replace its budget windows, e.g.
                                                                 '[{"amount":5,"period":"5h"},{"amount":20,"period":"monthly","timezone":"Europe/Berlin"}]'
                                                                 ('[]' removes them); validated as POST /v1/auth/proxy/update
                                                                 validates budgets. The edges are told at once (keys.changed
                                                                 over NATS_URL); if that publish fails the change stands, an
                                                                 error is logged and edges see it within AUTH_CACHE_TTL_SECONDS
  bootstrap                                                      create or update the bootstrap account from BOOTSTRAP_* env
  usage dead-letters                                             list the usage events metering set aside (USAGE_DEAD)
  usage replay <request-id>... | --all [--sanitize] [--wait <s>] republish them to USAGE and remove them from USAGE_DEAD;
                                                                 --sanitize replaces NUL and lone surrogates with U+FFFD
options: --json prints machine-readable output`;

class UsageError extends Error {}

const AMOUNT = /^-?\d+(\.\d{1,8})?$/;

function requirePlan(value: string | undefined): Plan {
  if (!value || !(Plans as readonly string[]).includes(value)) throw new UsageError(`--plan must be one of ${Plans.join(', ')}`);
  return value as Plan;
}

function requireAmount(name: string, value: string | undefined, allowNegative = false): string {
  if (!value || !AMOUNT.test(value) || (!allowNegative && value.startsWith('-'))) {
    throw new UsageError(`--${name} must be a decimal number with at most 8 decimal places`);
  }
  return value;
}

function requireString(name: string, value: string | undefined): string {
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function requireProxyKey(value: string | undefined): string {
  if (classifyKey(requireString('key', value)) !== 'proxy') throw new UsageError('--key must be a proxy key (ek-proxy-…)');
  return value as string;
}

/** `--set`: a JSON list of budget windows, refused as the API refuses `budgets` (the message names the field). */
function requireBudgetWindows(value: string): BudgetWindow[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new UsageError(`--set must be a JSON list of {amount, period, timezone?}: ${(error as Error).message}`);
  }
  const problem = budgetWindowsProblem(parsed, 'budgets');
  if (problem) throw new UsageError(problem);
  return parsed as BudgetWindow[];
}

const resetTime = (resetsAt: number | null): string => (resetsAt === null ? '-' : new Date(resetsAt * 1000).toISOString().replace('.000Z', 'Z'));

function budgetsTable(budgets: KeyBudget[]): string {
  const rows = [['period', 'timezone', 'amount', 'used', 'remaining', 'resets at']];
  for (const b of budgets) rows.push([b.period, b.timezone, String(b.amount), String(b.used), String(b.remaining), resetTime(b.resets_at)]);
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column >= 2 && column <= 4 ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function bootstrapKey(variable: string, expected: 'master' | 'dev'): string | undefined {
  const value = process.env[variable];
  if (!value) return undefined;
  const prefix = expected === 'master' ? 'ek-' : 'ek-dev-';
  if (classifyKey(value) !== expected || value.length < prefix.length + 32) {
    throw new UsageError(`${variable} must start with ${prefix} followed by at least 32 characters`);
  }
  return value;
}

type Output = Record<string, unknown> | Record<string, unknown>[];

async function run(argv: string[]): Promise<{ text: string; json: Output }> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      plan: { type: 'string' },
      credits: { type: 'string' },
      account: { type: 'string' },
      amount: { type: 'string' },
      all: { type: 'boolean', default: false },
      sanitize: { type: 'boolean', default: false },
      wait: { type: 'string' },
      key: { type: 'string' },
      set: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals[0] === 'usage' && (positionals[1] === 'dead-letters' || positionals[1] === 'replay')) {
    if (positionals[1] === 'dead-letters' && positionals.length > 2) throw new UsageError('usage dead-letters takes no arguments');
    return runUsageCommand(`usage ${positionals[1]}`, positionals.slice(2), values, (message) => new UsageError(message));
  }
  const command = positionals.join(' ');
  const known = ['account create', 'account list', 'account credit', 'devpass create', 'key regen', 'proxy budgets', 'bootstrap'];
  if (!known.includes(command)) throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  // Bad input is refused before anything connects.
  const proxyCommand =
    command === 'proxy budgets'
      ? {
          accountId: requireString('account', values.account),
          proxy_key: requireProxyKey(values.key),
          budgets: values.set === undefined ? undefined : requireBudgetWindows(values.set),
        }
      : undefined;

  const env = loadEnvOrExit(KeyServiceEnv, 'admin');
  const app = await NestFactory.createApplicationContext(KeyServiceModule.forRoot(env, { withTransports: false }), {
    logger: ['error', 'warn'],
  });
  try {
    const accounts = app.get(AccountsService);
    switch (command) {
      case 'account create': {
        const { account, masterKey } = await accounts.create(requirePlan(values.plan), requireAmount('credits', values.credits ?? '0'));
        return {
          text: `account ${account.id}\nplan ${account.plan}\ncredits ${account.credits.toString()}\nmaster key ${masterKey}`,
          json: { account_id: account.id, plan: account.plan, credits: account.credits.toNumber(), master_key: masterKey },
        };
      }
      case 'account list': {
        const list = await accounts.list();
        const rows = list.map((a) => ({
          account_id: a.id,
          plan: a.plan,
          credits: a.credits.toNumber(),
          bootstrap: a.isBootstrap,
          created_at: Math.floor(a.createdAt.getTime() / 1000),
        }));
        const text = list.map((a) => `${a.id}  ${a.plan.padEnd(10)} ${a.credits.toString().padStart(14)}${a.isBootstrap ? '  (bootstrap)' : ''}`);
        return { text: text.join('\n') || 'no accounts', json: rows };
      }
      case 'account credit': {
        const account = await accounts.credit(requireString('account', values.account), requireAmount('amount', values.amount, true));
        return {
          text: `account ${account.id} credits ${account.credits.toString()}`,
          json: { account_id: account.id, credits: account.credits.toNumber() },
        };
      }
      case 'devpass create': {
        const key = await accounts.createDevPass(requireString('account', values.account));
        return { text: `devpass key ${key}`, json: { dev_key: key } };
      }
      case 'key regen': {
        const { key } = await app.get(KeysService).regenerateMasterKey(requireString('account', values.account));
        return { text: `master key ${key}`, json: { master_key: key } };
      }
      case 'proxy budgets': {
        const { accountId, proxy_key, budgets } = proxyCommand!;
        const proxyKeys = app.get(ProxyKeysService);
        if (budgets !== undefined) {
          try {
            // As POST /v1/auth/proxy/update with only `budgets`: stored, then keys.changed published to the edges.
            await proxyKeys.update({ accountId, proxy_key, budgets });
          } catch (error) {
            // A window the allocation already is (its spend_window in UTC): bad input, nothing written.
            if (error instanceof DomainError && error.code === ErrorCode.InvalidRequest) throw new UsageError(error.message);
            throw error;
          }
        }
        const record = await proxyKeys.lookup({ accountId, proxy_key });
        const masked = maskKey(proxy_key);
        const heading = `${budgets === undefined ? 'budgets of' : 'budget windows replaced; budgets of'} proxy key ${masked} (account ${accountId})`;
        return {
          text: `${heading}\n${budgetsTable(record.budgets)}`,
          json: { account_id: accountId, masked_key: masked, updated: budgets !== undefined, budgets: record.budgets },
        };
      }
      default: {
        const result = await accounts.ensureBootstrap({
          plan: requirePlan(process.env.BOOTSTRAP_PLAN ?? 'pro'),
          credits: requireAmount('BOOTSTRAP_CREDITS', process.env.BOOTSTRAP_CREDITS ?? '100'),
          masterKey: bootstrapKey('BOOTSTRAP_MASTER_KEY', 'master'),
          devKey: bootstrapKey('BOOTSTRAP_DEV_KEY', 'dev'),
        });
        const lines = [`bootstrap account ${result.accountId} (${result.created ? 'created' : 'exists'})`];
        if (result.masterKey) lines.push(`master key ${result.masterKey}`);
        if (result.devKey) lines.push(`devpass key ${result.devKey}`);
        return {
          text: lines.join('\n'),
          json: {
            account_id: result.accountId,
            created: result.created,
            master_key: result.masterKey ?? null,
            dev_key: result.devKey ?? null,
          },
        };
      }
    }
  } finally {
    await app.close();
  }
}

const argv = process.argv.slice(2);
run(argv)
  .then(({ text, json }) => {
    // Exit once the output is written: to a pipe stdout is asynchronous, and a long list was cut short.
    process.stdout.write(`${argv.includes('--json') ? JSON.stringify(json) : text}\n`, () => process.exit(0));
  })
  .catch((error: Error) => {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    new Logger('admin').error(error.message);
    process.exit(1);
  });
