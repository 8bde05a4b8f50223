'use strict';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Undo steps, run newest first, once: `add(name, fn)`, then `run()`. A step that fails or takes
 * over 20 s is logged (`log`) and the next one runs.
 */
function createCleanup(log) {
  const steps = [];
  let running = null;
  return {
    add(name, fn) {
      steps.push({ name, fn });
    },
    run() {
      running ??= (async () => {
        while (steps.length) {
          const { name, fn } = steps.pop();
          try {
            await Promise.race([fn(), sleep(20_000).then(() => log(`stopping ${name} took over 20 s; moving on`))]);
          } catch (error) {
            log(`stopping ${name} failed: ${error.message}`);
          }
        }
      })();
      return running;
    },
  };
}

module.exports = { createCleanup };
