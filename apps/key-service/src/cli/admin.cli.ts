import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { classifyKey, Plan, Plans } from '@gateway/contracts';
import { loadEnvOrExit } from '@gateway/platform';
import { parseArgs } from 'node:util';
import { AccountsService } from '../accounts/accounts.service';
import { KeyServiceModule } from '../app.module';
import { KeyServiceEnv } from '../config/key-service.env';
import { KeysService } from '../keys/keys.service';
import { runUsageCommand } from './usage-dead-letters.command';

const USAGE = `usage: npm run admin -- <command>
  account create --plan <${Plans.join('|')}> --credits <amount>   create an account; prints its id and master key
  account list                                                   list accounts
  account credit --account <id> --amount <amount>                add credits (negative to remove)
  devpass create --account <id>                                  issue a DevPass (ek-dev-) key
  key regen --account <id>                                       issue a new master key (the old one stops working)
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
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals[0] === 'usage' && (positionals[1] === 'dead-letters' || positionals[1] === 'replay')) {
    if (positionals[1] === 'dead-letters' && positionals.length > 2) throw new UsageError('usage dead-letters takes no arguments');
    return runUsageCommand(`usage ${positionals[1]}`, positionals.slice(2), values, (message) => new UsageError(message));
  }
  const command = positionals.join(' ');
  const known = ['account create', 'account list', 'account credit', 'devpass create', 'key regen', 'bootstrap'];
  if (!known.includes(command)) throw new UsageError(command ? `unknown command: ${command}` : 'no command given');

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
