'use strict';
/**
 * The Portkey AI gateway (@portkey-ai/gateway, a devDependency) as a comparison point, run from
 * node_modules with its own Node server entry, `build/start-server.js`. That entry reads
 * `--port=<n>` (the `=` form only; default 8787) and `--headless` (no log UI routes), and serves on
 * every interface through @hono/node-server; the bench only ever talks to it on 127.0.0.1.
 *
 * Portkey routes by request headers: `x-portkey-provider: openai` picks its OpenAI provider and
 * `x-portkey-custom-host: http://127.0.0.1:<mock>/v1` replaces https://api.openai.com/v1 (loopback
 * is in its default TRUSTED_CUSTOM_HOSTS); `Authorization` is passed on as the provider key.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { waitForPort } = require('../../tools/scripts/lib/infra');
const { freePort, root } = require('../../tools/scripts/lib/suite');
const { withoutProxies } = require('./our-suite');

function portkeyEntry() {
  const candidates = [];
  try {
    candidates.push(path.join(path.dirname(require.resolve('@portkey-ai/gateway/package.json', { paths: [root] })), 'build', 'start-server.js'));
  } catch {
    // the package's "exports" may hide package.json; fall back to the usual place
  }
  candidates.push(path.join(root, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js'));
  const found = candidates.find((file) => fs.existsSync(file));
  if (!found) throw new Error('@portkey-ai/gateway is not installed (npm install)');
  return found;
}

function portkeyVersion() {
  try {
    return JSON.parse(fs.readFileSync(path.join(path.dirname(portkeyEntry()), '..', 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

function portkeyHeaders(mockUrl, upstreamKey) {
  return {
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `${mockUrl}/v1`,
    authorization: `Bearer ${upstreamKey}`,
  };
}

/**
 * Starts Portkey on a free port with its output in <logDir>/portkey.log.
 * @returns {Promise<{url: string, pid: number, shim: boolean, version: string}>}
 */
async function startPortkey({ logDir, cleanup, shim = true, onUnexpectedExit }) {
  const port = await freePort();
  const entry = portkeyEntry();
  const args = [...(shim ? ['--require', path.join(__dirname, 'portkey-fetch-shim.js')] : []), entry, `--port=${port}`, '--headless'];
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = fs.openSync(path.join(logDir, 'portkey.log'), 'a');
  const child = spawn(process.execPath, args, {
    cwd: path.dirname(entry),
    env: withoutProxies({ ...process.env, NODE_ENV: 'production' }),
    stdio: ['ignore', logFile, logFile],
  });
  fs.closeSync(logFile);
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping && onUnexpectedExit) onUnexpectedExit('portkey', code, signal);
  });
  cleanup.add('Portkey gateway', async () => {
    stopping = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  });
  if (!(await waitForPort('127.0.0.1', port, 20))) throw new Error(`Portkey did not listen on port ${port} (see ${path.join(logDir, 'portkey.log')})`);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, shim, version: portkeyVersion() };
}

module.exports = { startPortkey, portkeyHeaders };
