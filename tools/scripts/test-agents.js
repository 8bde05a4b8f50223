'use strict';
/**
 * npm run test:agents: the coding agents people point at the gateway, run for real against a
 * private suite. Claude Code (`claude -p`, a DevPass key, `sim-coder:dev`, a task and `/context`)
 * and Codex (`codex exec`, a custom provider with `wire_api = "responses"`, a task and one that
 * makes it call a tool) each run in a temp working directory with every outside address blocked;
 * a session passes when it exits 0 with an answer and the edge logged no 4xx/5xx while it ran.
 *
 * Not part of `npm test`: the CLIs are platform binaries (hundreds of MB) installed on demand into
 * tmp/agents at the pinned versions below, and they are products of their own that change between
 * releases; a failure here says "this agent breaks", not "this commit broke the gateway".
 *
 * The suite is the end-to-end one (apps/gateway-e2e global setup: fresh database, private NATS,
 * two edges, the simulator); TEST_NAMESPACE (default `agents`) and TEST_REDIS_DB (default 12) keep
 * it apart from other runs. AGENT_TIMEOUT_MS bounds each session (default 240000).
 */
require('./lib/runtime').assertSupportedRuntime('npm run test:agents');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const AGENTS = { '@anthropic-ai/claude-code': '2.1.197', '@openai/codex': '0.169.0' };
const AGENTS_DIR = path.join(root, 'tmp', 'agents');
const MODEL = 'sim-coder:dev';
const TIMEOUT_MS = Number(process.env.AGENT_TIMEOUT_MS ?? 240_000);

process.env.TEST_NAMESPACE ??= 'agents';
process.env.TEST_REDIS_DB ??= '12';

/** The CLIs at the pinned versions, installed once into tmp/agents (outside the workspace's packages). */
function installAgents() {
  const installed = (name) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(AGENTS_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch {
      return undefined;
    }
  };
  const missing = Object.entries(AGENTS).filter(([name, version]) => installed(name) !== version);
  if (missing.length === 0) return;
  fs.mkdirSync(AGENTS_DIR, { recursive: true });
  if (!fs.existsSync(path.join(AGENTS_DIR, 'package.json'))) fs.writeFileSync(path.join(AGENTS_DIR, 'package.json'), '{"private": true}\n');
  console.log(`installing ${missing.map(([name, version]) => `${name}@${version}`).join(', ')} into tmp/agents...`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--no-save', ...missing.map(([name, version]) => `${name}@${version}`)], {
    cwd: AGENTS_DIR,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('could not install the agent CLIs');
}

/** Claude Code's native binary: the platform package's own file (the wrapper's copy is put in place by a postinstall script that may not have run). */
function claudeBinary() {
  const arch = process.arch === 'x64' ? 'x64' : 'arm64';
  const platform = `${process.platform}-${arch}`;
  const candidates = [
    path.join(AGENTS_DIR, 'node_modules', '@anthropic-ai', `claude-code-${platform}`, 'claude'),
    path.join(AGENTS_DIR, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe'),
  ];
  const found = candidates.find((file) => fs.existsSync(file) && fs.statSync(file).size > 1_000_000);
  if (!found) throw new Error(`no Claude Code binary for ${platform} in tmp/agents`);
  return { command: found, args: [] };
}

function codexCommand() {
  return { command: process.execPath, args: [path.join(AGENTS_DIR, 'node_modules', '@openai', 'codex', 'bin', 'codex.js')] };
}

/**
 * The environment of an agent: nothing of ours (no keys or settings of the person running this),
 * every outside address sent to a closed local port, telemetry and self-update off.
 */
function agentEnv(home, closedPort, extra) {
  const proxy = `http://127.0.0.1:${closedPort}`;
  return {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    ALL_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    all_proxy: proxy,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    NO_COLOR: '1',
    ...extra,
  };
}

/** Runs one session to its end (or the timeout); resolves with what it printed and how it ended. */
function runSession({ name, command, args, cwd, env, logDir }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, TIMEOUT_MS);
    const finish = (code, signal, error) => {
      clearTimeout(timer);
      fs.writeFileSync(path.join(logDir, `${name}.stdout.txt`), stdout);
      fs.writeFileSync(path.join(logDir, `${name}.stderr.txt`), stderr + (error ? `\n${error.stack}` : ''));
      resolve({ name, code, signal, timedOut, error, stdout, stderr, started, ended: Date.now() });
    };
    child.on('error', (error) => finish(null, null, error));
    child.on('exit', (code, signal) => finish(code, signal));
  });
}

/** The edges' "request completed" lines logged between `from` and `to` (Unix ms). */
function edgeRequests(logDir, from, to) {
  const lines = [];
  for (const file of fs.readdirSync(logDir).filter((name) => name.startsWith('edge-') && name.endsWith('.log'))) {
    for (const line of fs.readFileSync(path.join(logDir, file), 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      const time = Date.parse(entry.time);
      if (entry.msg === 'request completed' && time >= from && time <= to) lines.push(entry);
    }
  }
  return lines;
}

/**
 * Waits until the edge has written its log line for every request so far: it logs each request in
 * order as its response ends, so once a probe's line is in the file, every earlier one is too.
 */
async function settleLogs(edge, logDir) {
  const response = await fetch(`${edge}/`);
  const probe = response.headers.get('x-request-id');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const written = fs.readFileSync(path.join(logDir, 'edge-a.log'), 'utf8');
    if (probe && written.includes(probe)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the edge never logged the probe request ${probe}`);
}

async function main() {
  installAgents();
  require('@swc-node/register');
  const setup = require('../../apps/gateway-e2e/src/support/global-setup.ts').default;
  const teardown = require('../../apps/gateway-e2e/src/support/global-teardown.ts').default;
  const { createAccount, createDevPass } = require('../../apps/gateway-e2e/src/support/api.ts');
  const { suiteInfo } = require('../../apps/gateway-e2e/src/support/suite-info.ts');
  const { freePort } = require('./lib/suite');

  console.log('starting the suite (build, database, NATS, services)...');
  await setup();
  const results = [];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-agents-'));
  const logDir = path.join(root, 'tmp', 'agents-logs');
  fs.rmSync(logDir, { recursive: true, force: true });
  fs.mkdirSync(logDir, { recursive: true });
  try {
    const info = suiteInfo();
    const account = createAccount('pro', '100');
    const devKey = createDevPass(account.accountId);
    // Nothing listens there once freePort has closed it: a request through the proxy is refused at once.
    const closedPort = await freePort();

    const workspace = (name) => {
      const dir = path.join(work, name);
      fs.mkdirSync(path.join(dir, 'home'), { recursive: true });
      fs.mkdirSync(path.join(dir, 'project'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'project', 'notes.txt'), 'The meeting moved to Thursday at 10:00 in room B.\n');
      return { home: path.join(dir, 'home'), project: path.join(dir, 'project') };
    };
    const task = 'Read the file notes.txt in the current directory and tell me in one sentence when the meeting is.';
    // Says "tool" without naming one: the simulator calls the first tool offered, and the next request answers its result.
    const toolTask = 'Use a tool to look at notes.txt, then tell me in one sentence when the meeting is.';

    const claudeEnv = (home) =>
      agentEnv(home, closedPort, {
        ANTHROPIC_BASE_URL: info.edgeA,
        ANTHROPIC_API_KEY: devKey,
        ANTHROPIC_MODEL: MODEL,
        ANTHROPIC_SMALL_FAST_MODEL: MODEL,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL,
        ANTHROPIC_DEFAULT_SONNET_MODEL: MODEL,
        ANTHROPIC_DEFAULT_OPUS_MODEL: MODEL,
      });
    const claude = claudeBinary();
    const sessions = [
      {
        name: 'claude-code-task',
        run: (dirs) => ({
          ...claude,
          args: [...claude.args, '-p', task, '--model', MODEL, '--max-turns', '8', '--allowedTools', 'Read,Glob,Grep,LS'],
          env: claudeEnv(dirs.home),
        }),
      },
      {
        name: 'claude-code-context',
        run: (dirs) => ({ ...claude, args: [...claude.args, '-p', '/context', '--model', MODEL], env: claudeEnv(dirs.home) }),
      },
      ...['codex-exec', 'codex-exec-tool'].map((name) => ({
        name,
        run: (dirs) => {
          const codexHome = path.join(dirs.home, '.codex');
          fs.mkdirSync(codexHome, { recursive: true });
          fs.writeFileSync(
            path.join(codexHome, 'config.toml'),
            [
              `model = "${MODEL}"`,
              'model_provider = "gateway"',
              'check_for_update_on_startup = false',
              '',
              '[model_providers.gateway]',
              'name = "Model gateway"',
              `base_url = "${info.edgeA}/v1"`,
              'env_key = "GATEWAY_KEY"',
              'wire_api = "responses"',
              '',
              '[analytics]',
              'enabled = false',
              '',
            ].join('\n'),
          );
          const codex = codexCommand();
          return {
            ...codex,
            args: [...codex.args, 'exec', '--skip-git-repo-check', '--sandbox', 'read-only', '--color', 'never', name === 'codex-exec' ? task : toolTask],
            env: agentEnv(dirs.home, closedPort, { CODEX_HOME: codexHome, GATEWAY_KEY: devKey }),
          };
        },
      })),
    ];

    for (const session of sessions) {
      const dirs = workspace(session.name);
      const { command, args, env } = session.run(dirs);
      console.log(`\n== ${session.name}: ${path.basename(command)} ${args.map((arg) => (arg.includes(' ') ? JSON.stringify(arg) : arg)).join(' ')}`);
      const result = await runSession({ name: session.name, command, args, cwd: dirs.project, env, logDir });
      await settleLogs(info.edgeA, info.logDir);
      result.requests = edgeRequests(info.logDir, result.started, result.ended);
      results.push(result);
      console.log(`exit ${result.timedOut ? `timeout after ${TIMEOUT_MS} ms` : (result.code ?? result.signal)}, ${result.requests.length} gateway requests`);
      console.log(`output: ${result.stdout.trim().slice(0, 600) || '(none)'}`);
      if (result.code !== 0 && result.stderr.trim()) console.log(`stderr (end): ${result.stderr.trim().slice(-1500)}`);
    }
  } finally {
    await teardown();
    fs.rmSync(work, { recursive: true, force: true });
  }

  console.log('\n== summary');
  let failed = 0;
  for (const result of results) {
    const problems = [];
    if (result.error) problems.push(`could not start: ${result.error.message}`);
    else if (result.timedOut) problems.push(`no answer within ${TIMEOUT_MS} ms`);
    else if (result.code !== 0) problems.push(`exit ${result.code ?? result.signal}`);
    if (!result.stdout.trim()) problems.push('no output');
    if (result.requests.length === 0) problems.push('never reached the gateway');
    const bad = result.requests.filter((entry) => entry.status >= 400);
    for (const entry of bad) problems.push(`${entry.method} ${entry.route} → ${entry.status} (${entry.request_id})`);
    const routes = {};
    for (const entry of result.requests)
      routes[`${entry.method} ${entry.route} ${entry.status}`] = (routes[`${entry.method} ${entry.route} ${entry.status}`] ?? 0) + 1;
    const seconds = ((result.ended - result.started) / 1000).toFixed(1);
    console.log(
      `${problems.length === 0 ? 'PASS' : 'FAIL'}  ${result.name} (${seconds} s): ${
        Object.entries(routes)
          .map(([route, count]) => `${route} ×${count}`)
          .join(', ') || 'no requests'
      }`,
    );
    for (const problem of problems) console.log(`      ${problem}`);
    if (problems.length > 0) failed++;
  }
  console.log(`\nagent sessions: ${results.length - failed} passed, ${failed} failed (output in tmp/agents-logs, gateway logs in tmp/e2e-logs)`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(`test:agents could not run: ${error.stack ?? error.message}`);
  process.exit(1);
});
