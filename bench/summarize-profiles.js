#!/usr/bin/env node
'use strict';
/**
 * Summarises the CPU profiles `BENCH_CPU_PROF=<dir> npm run bench` writes (one `.cpuprofile` per
 * process): per process, the sampled CPU time split by where it was spent (our code by app or lib,
 * each dependency package, node's internals, GC), and the functions with the most self time.
 *
 *   node bench/summarize-profiles.js <dir> [--top 15] [--per <requests>]
 *
 * `--per N` also prints each figure divided by N (e.g. the bench's 2xx count) in µs per request.
 */
const fs = require('node:fs');
const path = require('node:path');

function parseArgs(argv) {
  const options = { dir: undefined, top: 15, per: 0 };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--top') options.top = Number(argv[++i]);
    else if (argv[i] === '--per') options.per = Number(argv[++i]);
    else options.dir = argv[i];
  }
  if (!options.dir || !Number.isInteger(options.top) || options.top < 1 || !(options.per >= 0)) {
    console.error('usage: node bench/summarize-profiles.js <dir> [--top N] [--per requests]');
    process.exit(2);
  }
  return options;
}

/** Where a frame's code lives: our app or lib, a dependency package, node itself, or a VM state. */
function placeOf(frame) {
  const url = frame.url || '';
  if (!url) {
    if (frame.functionName === '(garbage collector)') return 'gc';
    if (frame.functionName === '(idle)' || frame.functionName === '(program)') return frame.functionName;
    return 'native';
  }
  if (url.startsWith('node:')) return 'node';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const ours = /\/dist\/((?:apps|libs)\/[^/]+)\//.exec(url);
  if (ours) return `ours: ${ours[1]}`;
  return 'other';
}

function summarise(file) {
  const { nodes, samples, timeDeltas } = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const selfUs = new Map();
  for (let i = 0; i < samples.length; i++) selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, timeDeltas[i] ?? 0));
  const places = new Map();
  const functions = new Map();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id).callFrame;
    const place = placeOf(frame);
    if (place === '(idle)') continue;
    busy += us;
    places.set(place, (places.get(place) ?? 0) + us);
    const name = `${frame.functionName || '(anonymous)'} ${frame.url ? `${path.basename(frame.url)}:${frame.lineNumber + 1}` : ''}`.trim();
    const key = `${place} | ${name}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  return { busy, places, functions };
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const files = fs.readdirSync(options.dir).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length === 0) {
    console.error(`no .cpuprofile files in ${options.dir}`);
    process.exit(1);
  }
  const ms = (us) => (us / 1000).toFixed(0).padStart(7) + ' ms' + (options.per ? `  ${(us / options.per).toFixed(1).padStart(7)} µs/req` : '');
  for (const name of files.sort()) {
    const { busy, places, functions } = summarise(path.join(options.dir, name));
    console.log(`\n## ${name}: ${ms(busy)} busy`);
    for (const [place, us] of [...places].sort((a, b) => b[1] - a[1]).slice(0, options.top)) {
      console.log(`  ${ms(us)}  ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${place}`);
    }
    console.log('  top functions (self time):');
    for (const [key, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, options.top)) {
      console.log(`  ${ms(us)}  ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${key}`);
    }
  }
}

main();
