'use strict';
/**
 * The environment `npm start` and `npm run admin` give the services on a developer machine. The
 * key-encryption key must stay stable across restarts, so it is made once and kept in .local/
 * (git-ignored, mode 600), with the bootstrap keys as first printed. Variables already set in the
 * environment win.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { defaults } = require('./infra');

const root = path.resolve(__dirname, '..', '..', '..');
const stateFile = path.join(root, '.local', 'dev-secrets.json');

function loadState() {
  try {
    return JSON.parse(fs.readFileSync(stateFile, 'utf8'));
  } catch {
    return {};
  }
}

function saveState(state) {
  fs.mkdirSync(path.dirname(stateFile), { recursive: true });
  fs.writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** Values generated once per checkout. */
function localSecrets() {
  const state = loadState();
  let changed = false;
  const ensure = (name, make) => {
    if (!state[name]) {
      state[name] = make();
      changed = true;
    }
    return state[name];
  };
  ensure('KEY_ENCRYPTION_KEY', () => crypto.randomBytes(32).toString('hex'));
  ensure('FILE_URL_SECRET', () => crypto.randomBytes(32).toString('base64url'));
  // Kept with the checkout, so the reasoning clients hold still opens after a restart.
  ensure('REASONING_SEAL_KEY', () => crypto.randomBytes(32).toString('base64'));
  if (changed) saveState(state);
  return state;
}

function localEnv(overrides = {}) {
  const { KEY_ENCRYPTION_KEY, FILE_URL_SECRET, REASONING_SEAL_KEY } = localSecrets();
  return { ...defaults, KEY_ENCRYPTION_KEY, FILE_URL_SECRET, REASONING_SEAL_KEY, ...process.env, ...overrides };
}

/** Remembers the bootstrap account's keys when a run issued them, and returns the latest known. */
function rememberBootstrap(result) {
  const state = loadState();
  if (state.bootstrap?.account_id !== result.account_id) state.bootstrap = { account_id: result.account_id };
  if (result.master_key) state.bootstrap.master_key = result.master_key;
  if (result.dev_key) state.bootstrap.dev_key = result.dev_key;
  saveState(state);
  return state.bootstrap;
}

module.exports = { localEnv, rememberBootstrap, root };
