import { printable, storableText } from '@gateway/contracts';
import { PrismaService } from '@gateway/db';
import { DatabaseEnv, loadEnvOrExit, NATS_RECONNECT_OPTIONS, splitList, StoredDeadLetter, UsageDeadLetters } from '@gateway/platform';
import { connect } from 'nats';
import { UsageLogsRepository } from '../usage/usage-logs.repository';

export interface CommandOutput {
  text: string;
  json: Record<string, unknown> | Record<string, unknown>[];
}

export interface UsageCommandOptions {
  all?: boolean;
  sanitize?: boolean;
  /** Seconds to wait for the replayed events to reach the ledger. */
  wait?: string;
}

const row = (letter: StoredDeadLetter) => ({
  seq: letter.seq,
  request_id: letter.requestId ?? null,
  account_id: letter.accountId ?? null,
  reason: letter.reason,
  code: letter.code,
  message: letter.message,
  deliveries: letter.deliveries,
  usage_sequence: letter.streamSequence,
  dead_lettered_at: letter.deadLetteredAt,
});

const line = (letter: StoredDeadLetter) =>
  [
    String(letter.seq).padStart(6),
    letter.deadLetteredAt,
    letter.requestId === undefined ? '-' : printable(letter.requestId, 80),
    letter.accountId === undefined ? '-' : printable(letter.accountId, 80),
    `${letter.reason} (${letter.code})`,
    `deliveries ${letter.deliveries}`,
    `usage seq ${letter.streamSequence}`,
    letter.message,
  ].join('  ');

/**
 * `usage dead-letters` and `usage replay`: the usage events metering set aside (the USAGE_DEAD
 * stream). Needs only NATS_URL (and DATABASE_URL for replay, to report what reached the ledger).
 */
export async function runUsageCommand(
  command: 'usage dead-letters' | 'usage replay',
  requestIds: string[],
  options: UsageCommandOptions,
  usageError: (message: string) => Error,
): Promise<CommandOutput> {
  if (command === 'usage replay' && !options.all && requestIds.length === 0) throw usageError('usage replay needs request ids or --all');
  if (command === 'usage replay' && options.all && requestIds.length > 0) throw usageError('give request ids or --all, not both');
  const waitSeconds = Number(options.wait ?? 10);
  if (!Number.isFinite(waitSeconds) || waitSeconds < 0 || waitSeconds > 600) throw usageError('--wait must be a number of seconds from 0 to 600');
  const env = loadEnvOrExit(DatabaseEnv, 'admin');
  const nats = await connect({ servers: splitList(env.NATS_URL), name: 'admin', ...NATS_RECONNECT_OPTIONS, maxReconnectAttempts: 2 });
  try {
    const deadLetters = new UsageDeadLetters(nats);
    const letters = await deadLetters.list();
    if (command === 'usage dead-letters') {
      return { text: letters.map(line).join('\n') || 'no dead-lettered usage events', json: letters.map(row) };
    }
    // Ids as typed; a sanitized one (U+FFFD where the event had a NUL or lone surrogate) also matches.
    const wanted = new Set(requestIds);
    const selected = options.all
      ? letters
      : letters.filter(({ requestId }) => requestId !== undefined && (wanted.has(requestId) || wanted.has(storableText(requestId))));
    const missing = requestIds.filter(
      (id) => !letters.some(({ requestId }) => requestId !== undefined && (requestId === id || storableText(requestId) === id)),
    );
    const outcomes = await deadLetters.replay(selected, { sanitize: options.sanitize });
    const republished = outcomes.filter((outcome) => outcome.outcome === 'republished').map(({ requestId }) => requestId as string);
    const recorded = await waitForLedger(env.DATABASE_URL, republished, waitSeconds * 1000);
    const results = [
      ...outcomes.map((outcome) => ({
        seq: outcome.seq,
        request_id: outcome.requestId ?? null,
        result: outcome.outcome === 'skipped' ? 'skipped' : recorded.has(outcome.requestId) ? 'recorded' : 'republished',
        ...(outcome.outcome === 'skipped' ? { why: outcome.why } : { usage_sequence: outcome.usageSequence, sanitized: outcome.sanitized }),
      })),
      ...missing.map((id) => ({ seq: null, request_id: id, result: 'not_found' })),
    ];
    const text = results.map((result) =>
      [
        result.request_id === null ? `#${result.seq}` : printable(result.request_id, 80),
        result.result === 'republished' ? 'republished to USAGE; not in the ledger yet (is metering running?)' : result.result,
        'why' in result ? result.why : '',
      ]
        .join('  ')
        .trim(),
    );
    return { text: text.join('\n') || 'no dead-lettered usage events', json: results };
  } finally {
    await nats.close();
  }
}

/** Which of the request ids the ledger holds within `timeoutMs` (polling). */
async function waitForLedger(databaseUrl: string, requestIds: string[], timeoutMs: number): Promise<Set<string>> {
  if (requestIds.length === 0) return new Set();
  const prisma = new PrismaService(databaseUrl);
  try {
    const logs = new UsageLogsRepository(prisma);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const recorded = await logs.recorded(requestIds);
      if (recorded.size === new Set(requestIds).size || Date.now() >= deadline) return recorded;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await prisma.$disconnect();
  }
}
