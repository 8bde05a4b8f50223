#!/usr/bin/env node
// node docs/check-links.mjs: every relative link in README.md, CONTRIBUTING.md and docs/*.md must
// reach a file (and heading) of this repository, because a fresh clone is all a reader has.
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const documents = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchorsOf(file) {
  const anchors = new Set();
  const seen = new Map();
  let inCode = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    const heading = !inCode && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

const problems = [];
for (const document of documents) {
  const file = join(root, document);
  const text = readFileSync(file, 'utf8');
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
    const [path, anchor] = target.split('#', 2);
    const destination = path ? resolve(dirname(file), path) : file;
    if (relative(root, destination).startsWith('..')) problems.push(`${document}: ${target} leaves the repository`);
    else if (!existsSync(destination)) problems.push(`${document}: ${target}: no such file`);
    else if (anchor && destination.endsWith('.md') && !anchorsOf(realpathSync(destination)).has(anchor)) {
      problems.push(`${document}: ${target}: no such heading`);
    }
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`links: ${documents.length} documents, every relative link resolves`);
