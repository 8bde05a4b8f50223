'use strict';
/**
 * The configuration table (docs/configuration.md) checked against the apps' environment classes, the
 * one place each variable is read and validated: every variable a class reads is documented, every
 * documented variable is read by a class (or is one of the few read elsewhere, listed below), and a
 * default the table gives as one literal is the class's default. Run by `npm run lint`.
 */
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
process.env.SWC_NODE_PROJECT ??= path.join(root, 'tsconfig.base.json');
require('reflect-metadata');
require('@swc-node/register');
const { getMetadataStorage } = require('class-validator');

/** Each app's environment class: the file and the exported class. */
const ENV_CLASSES = {
  'edge-gateway': ['apps/edge-gateway/src/config/edge.env.ts', 'EdgeEnv'],
  'inference-router': ['apps/inference-router/src/router.env.ts', 'RouterEnv'],
  'key-service': ['apps/key-service/src/config/key-service.env.ts', 'KeyServiceEnv'],
  'account-service': ['apps/account-service/src/account.env.ts', 'AccountEnv'],
  'metering-service': ['apps/metering-service/src/metering.env.ts', 'MeteringEnv'],
  'video-worker': ['apps/video-worker/src/video-worker.env.ts', 'VideoWorkerEnv'],
  // The migration runner: the `migrate` Job, `npm run migrate` and `npm start`.
  migrations: ['libs/platform/src/base-env.ts', 'MigrationEnv'],
};

/** Documented variables no environment class reads: the OpenTelemetry SDK and the bootstrap script read them. */
const READ_ELSEWHERE = /^(OTEL_|BOOTSTRAP_)/;

/** The variables of the first table: name → the default cells of the rows that name it. */
function documented() {
  const text = fs.readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8');
  const table = text.slice(text.indexOf('| variable'));
  const rows = table
    .slice(0, table.search(/\n\s*\n/))
    .split('\n')
    .slice(2);
  const variables = new Map();
  for (const row of rows) {
    const [nameCell, , defaultCell] = row
      .split('|')
      .slice(1)
      .map((cell) => cell.trim());
    if (!nameCell.startsWith('`')) continue; // "provider keys (`OPENAI_API_KEY`, ...)": named by the catalog
    const names = [...nameCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]);
    for (const name of names) {
      const defaults = variables.get(name) ?? [];
      // One variable in the row and one literal as its default: that literal is checked.
      const literal = names.length === 1 ? /^`([^`]*)`$/.exec(defaultCell) : null;
      defaults.push(literal ? literal[1] : undefined);
      variables.set(name, defaults);
    }
  }
  return variables;
}

function main() {
  const docs = documented();
  const problems = [];
  const read = new Set();
  for (const [app, [file, className]] of Object.entries(ENV_CLASSES)) {
    const envClass = require(path.join(root, file))[className];
    if (typeof envClass !== 'function') {
      problems.push(`${file} exports no class ${className}`);
      continue;
    }
    const instance = new envClass();
    const names = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(envClass, '', true, false)
        .map((meta) => meta.propertyName),
    );
    for (const name of names) {
      read.add(name);
      if (!docs.has(name)) {
        problems.push(`${name} (read by ${app}) is missing from docs/configuration.md`);
        continue;
      }
      const value = instance[name];
      if (value === undefined) continue;
      for (const literal of docs.get(name)) {
        if (literal !== undefined && literal !== String(value)) {
          problems.push(`${name}: docs/configuration.md says the default is \`${literal}\`; ${app} defaults to \`${value}\``);
        }
      }
    }
  }
  for (const name of docs.keys()) {
    if (!read.has(name) && !READ_ELSEWHERE.test(name)) problems.push(`${name} is documented in docs/configuration.md but no app reads it`);
  }
  if (problems.length > 0) {
    console.error(`configuration docs:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`configuration docs: ${read.size} variables of ${Object.keys(ENV_CLASSES).length} apps documented, defaults agree`);
}

main();
