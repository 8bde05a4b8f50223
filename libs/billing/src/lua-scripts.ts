import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The scripts, as `.lua` files beside this module (the build copies them into dist/ with it). */
export type ScriptName = 'admit' | 'rate-limit' | 'settle' | 'prime' | 'prime-window' | 'restore';

const LUA_DIR = join(__dirname, 'lua');
const INCLUDE = /^--#include ([\w-]+)\s*$/gm;

/**
 * A script's source, its `--#include <name>` lines replaced by `<name>.lua` (the functions several
 * scripts share): Redis runs one self-contained script, so the sharing is done here, at load time.
 */
export function loadScript(name: string, including: string[] = []): string {
  if (including.includes(name)) throw new Error(`Lua include cycle: ${[...including, name].join(' -> ')}`);
  const source = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8');
  return source.replace(INCLUDE, (_, included: string) => loadScript(included, [...including, name]));
}
