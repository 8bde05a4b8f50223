'use strict';
/**
 * CPU accounting from /proc (Linux only; elsewhere every figure is null): CPU time used by given
 * processes, by PostgreSQL and Redis (found by name), by the bench process itself, and by the
 * whole machine, between two snapshots. On a 2-core machine this tells how much of the hardware
 * each system under test needed per request, and whether something outside the bench was busy.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep the usual 100
}

const available = fs.existsSync('/proc/self/stat');

/** utime + stime + cutime + cstime of one process, in seconds, or null when it is gone. */
function processCpu(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime..cstime are fields 14..17
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return ticks / ticksPerSecond;
  } catch {
    return null;
  }
}

/** Pids of processes whose command name is `name` (e.g. postgres, redis-server). */
function pidsNamed(name) {
  if (!available) return [];
  const pids = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Busy and total CPU seconds of the whole machine (all cores). */
function machineCpu() {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = values[3] + (values[4] || 0); // idle + iowait
    const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
    return { busy: (total - idle) / ticksPerSecond, total: total / ticksPerSecond };
  } catch {
    return null;
  }
}

/**
 * @param {Record<string, number[]>} groups named groups of pids (a group's CPU is the sum)
 * @returns a snapshot for `diff`
 */
function snapshot(groups) {
  const at = process.hrtime.bigint();
  const perGroup = {};
  for (const [name, pids] of Object.entries(groups)) {
    perGroup[name] = {};
    for (const pid of pids) perGroup[name][pid] = processCpu(pid);
  }
  return { at, perGroup, machine: machineCpu(), self: processCpu(process.pid) };
}

/** CPU seconds per group between two snapshots (a pid missing in either is left out). */
function diff(before, after) {
  const seconds = Number(after.at - before.at) / 1e9;
  const groups = {};
  for (const [name, pids] of Object.entries(after.perGroup)) {
    let sum = 0;
    let seen = false;
    for (const [pid, value] of Object.entries(pids)) {
      const start = before.perGroup[name]?.[pid];
      if (value === null || start === null || start === undefined) continue;
      sum += value - start;
      seen = true;
    }
    groups[name] = seen ? sum : null;
  }
  const machine =
    before.machine && after.machine
      ? { busySeconds: after.machine.busy - before.machine.busy, totalSeconds: after.machine.total - before.machine.total }
      : null;
  const self = before.self !== null && after.self !== null ? after.self - before.self : null;
  return { seconds, groups, machine, self };
}

module.exports = { available, snapshot, diff, pidsNamed, processCpu, ticksPerSecond };
