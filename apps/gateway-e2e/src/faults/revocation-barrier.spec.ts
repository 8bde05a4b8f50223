/**
 * Revocation is a barrier across replicas: once a revoking call (regen, toggle, update, remove,
 * delete) has answered on one edge, the old key is refused on the other edge, even though that
 * edge had it cached a moment before. Issue #12 measured 1 stale acceptance in 200 under load
 * before revocation epochs; the bar is 0 in 1,000.
 */
import { api, createAccount, createProxyKey, TestAccount } from '../support/api';
import { suiteInfo } from '../support/suite-info';

const TRIES = Number(process.env.REVOCATION_TRIES ?? 1000);
const KINDS = ['regen', 'toggle', 'update', 'delete'] as const;
type Kind = (typeof KINDS)[number];
// Four workers per kind, each on an account of its own: enough concurrency that the edges and
// key-service are busy while a revocation lands, as in the measurement.
const WORKERS_PER_KIND = 4;

interface Outcome {
  kind: Kind;
  tries: number;
  /** Requests with the old key that the other edge served as before the revocation. */
  stale: string[];
  /** Anything else unexpected (a warm-up or a revoking call that failed). */
  errors: string[];
}

const edges = () => [suiteInfo().edgeA, suiteInfo().edgeB];
const models = (key: string, base: string) => api('GET', '/v1/models', { key, base });
const ids = (body: { data?: Array<{ id: string }> }) => (body?.data ?? []).map((model) => model.id);

async function warm(key: string, outcome: Outcome, label: string): Promise<boolean> {
  const answers = await Promise.all(edges().map((base) => models(key, base)));
  const failed = answers.find((answer) => answer.status !== 200);
  if (failed) outcome.errors.push(`${label}: warm-up answered ${failed.status} ${failed.text.slice(0, 200)}`);
  return !failed;
}

/** One worker: `tries` revocations of one kind, alternating which edge revokes. */
async function worker(kind: Kind, tries: number, account: TestAccount): Promise<Outcome> {
  const outcome: Outcome = { kind, tries: 0, stale: [], errors: [] };
  let master = account.masterKey;
  let proxy = kind === 'toggle' || kind === 'update' ? (await createProxyKey(master, { model_whitelist: ['sim-chat'] })).key : '';
  let whitelisted = 'sim-chat';
  for (let i = 0; i < tries; i++) {
    const [revoking, other] = i % 2 === 0 ? edges() : edges().reverse();
    const label = `${kind} #${i}`;
    if (kind === 'delete') proxy = (await createProxyKey(master)).key;
    const old = kind === 'regen' ? master : proxy;
    if (!(await warm(old, outcome, label))) continue;
    outcome.tries++;
    if (kind === 'regen') {
      const regen = await api('GET', '/v1/auth/key/regen', { key: master, base: revoking });
      if (regen.status !== 200) {
        outcome.errors.push(`${label}: regen answered ${regen.status}`);
        continue;
      }
      const after = await models(old, other);
      if (after.status !== 401) outcome.stale.push(`${label}: old master key answered ${after.status}`);
      master = regen.body.key;
    } else if (kind === 'toggle') {
      const off = await api('POST', '/v1/auth/proxy/toggle', { key: master, base: revoking, body: { proxy_key: proxy } });
      if (off.body?.status !== false) {
        outcome.errors.push(`${label}: toggle off answered ${off.status} ${off.text}`);
        continue;
      }
      const after = await models(old, other);
      if (after.status !== 401) outcome.stale.push(`${label}: disabled key answered ${after.status}`);
      const on = await api('POST', '/v1/auth/proxy/toggle', { key: master, base: revoking, body: { proxy_key: proxy } });
      if (on.body?.status !== true) outcome.errors.push(`${label}: toggle on answered ${on.status} ${on.text}`);
    } else if (kind === 'update') {
      const next = whitelisted === 'sim-chat' ? 'sim-reasoner' : 'sim-chat';
      const update = await api('POST', '/v1/auth/proxy/update', { key: master, base: revoking, body: { proxy_key: proxy, model_whitelist: [next] } });
      if (update.status !== 200) {
        outcome.errors.push(`${label}: update answered ${update.status} ${update.text}`);
        continue;
      }
      whitelisted = next;
      const after = await models(old, other);
      // Served under the old whitelist: the listing still shows the model it no longer allows.
      if (after.status !== 200 || ids(after.body).join() !== next)
        outcome.stale.push(`${label}: listing was ${after.status} ${ids(after.body).join()}, not ${next}`);
    } else {
      // Both ways of deleting one key, alternately.
      const removed =
        i % 4 < 2
          ? await api('DELETE', `/v1/auth/proxy/delete/${proxy}`, { key: master, base: revoking })
          : await api('POST', '/v1/auth/proxy/remove', { key: master, base: revoking, body: { proxy_key: proxy } });
      if (removed.status !== 200) {
        outcome.errors.push(`${label}: delete answered ${removed.status} ${removed.text}`);
        continue;
      }
      const after = await models(old, other);
      if (after.status !== 401) outcome.stale.push(`${label}: deleted key answered ${after.status}`);
    }
  }
  return outcome;
}

describe('revocation as a barrier across two edges', () => {
  it(`refuses the old key on the other edge right after the revoking call answered: 0 stale in ${TRIES} tries`, async () => {
    const perWorker = Math.ceil(TRIES / (KINDS.length * WORKERS_PER_KIND));
    // Every account first: the admin CLI blocks this process, and a connection a worker opened
    // meanwhile would sit without its request past the edge's header timeout (and be closed).
    const workers = KINDS.flatMap((kind) => Array.from({ length: WORKERS_PER_KIND }, () => ({ kind, account: createAccount('enterprise', '100') })));
    const outcomes = await Promise.all(workers.map(({ kind, account }) => worker(kind, perWorker, account)));
    const stale = outcomes.flatMap((outcome) => outcome.stale);
    const errors = outcomes.flatMap((outcome) => outcome.errors);
    const tries = outcomes.reduce((sum, outcome) => sum + outcome.tries, 0);
    expect(errors).toEqual([]);
    expect(stale).toEqual([]);
    expect(tries).toBeGreaterThanOrEqual(TRIES);
    for (const kind of KINDS) expect(outcomes.filter((outcome) => outcome.kind === kind && outcome.tries > 0)).toHaveLength(WORKERS_PER_KIND);
  }, 400_000);
});
