'use strict';
/**
 * The dependency rule anyone can check with `npx nx graph --file=tmp/graph.json`: apps depend on libs
 * only (the e2e project depends on the apps it starts, which is its job), and every lib has one layer
 * tag (model, domain or infra), whose rules the lint enforces. Run by `npm run lint`.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const file = path.join(root, 'tmp', 'graph.json');
const nx = spawnSync(process.execPath, [require.resolve('nx/bin/nx.js', { paths: [root] }), 'graph', `--file=${file}`], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, NX_DAEMON: 'false', NX_TUI: 'false', NX_NO_CLOUD: 'true' },
});
if (nx.status !== 0) process.exit(nx.status ?? 1);
const { nodes, dependencies } = JSON.parse(fs.readFileSync(file, 'utf8')).graph;
const problems = [];
const LAYERS = ['layer:model', 'layer:domain', 'layer:infra'];
for (const [name, node] of Object.entries(nodes)) {
  if (node.type !== 'app' && node.type !== 'lib') continue;
  // The lint's layer rules (eslint.config.mjs) bind only libs that carry exactly one layer tag.
  const layers = (node.data.tags ?? []).filter((tag) => LAYERS.includes(tag));
  if (node.type === 'lib' && layers.length !== 1) problems.push(`${name} (lib) needs exactly one of ${LAYERS.join(', ')}; it has ${layers.length}`);
  for (const { target } of dependencies[name] ?? []) {
    if (nodes[target] && nodes[target].type !== 'lib') problems.push(`${name} (${node.type}) depends on ${target} (${nodes[target].type})`);
  }
}
if (problems.length > 0) {
  console.error(`project graph: only libs may be depended on:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`project graph: ${Object.keys(nodes).length} projects, apps and libs depend on libs only`);
