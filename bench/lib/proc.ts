// CPU accounting from /proc: the machine's busy time (/proc/stat) and the time of the processes
// under test (/proc/<pid>/stat). Used for server CPU µs per request and to drop rounds in which
// something else ran on the machine.
import fs from 'node:fs';

/** Clock ticks per second of /proc times (USER_HZ; 100 on every Linux this runs on). */
export const TICKS_PER_SECOND = 100;

export interface MachineCpu {
  /** user + nice + system ticks summed over all CPUs. */
  busy: number;
  softirq: number;
  irq: number;
  steal: number;
}

export function machineCpu(): MachineCpu {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system, softirq, irq, steal };
}

interface ProcStat {
  ppid: number;
  /** utime + stime */
  self: number;
  /** cutime + cstime: children that exited and were reaped */
  reaped: number;
}

function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name is in parentheses and may hold spaces: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is state (field 3); utime is field 14 → index 11.
  return {
    ppid: Number(fields[1]),
    self: Number(fields[11]) + Number(fields[12]),
    reaped: Number(fields[13]) + Number(fields[14]),
  };
}

function allProcesses(): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  for (const name of fs.readdirSync('/proc')) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const stat = readStat(Number(name));
    if (stat) table.set(Number(name), stat);
  }
  return table;
}

/** `roots` and every live descendant of theirs, with their /proc stat lines. */
function tree(roots: number[]): Map<number, ProcStat> {
  const table = allProcesses();
  const children = new Map<number, number[]>();
  for (const [pid, stat] of table) {
    const list = children.get(stat.ppid);
    if (list) list.push(pid);
    else children.set(stat.ppid, [pid]);
  }
  const found = new Map<number, ProcStat>();
  const stack = [...roots];
  while (stack.length) {
    const pid = stack.pop()!;
    const stat = table.get(pid);
    if (!stat || found.has(pid)) continue;
    found.set(pid, stat);
    stack.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Ticks used so far by `root` and every live descendant, including their reaped children. */
export function treeTicks(roots: number[]): number {
  let total = 0;
  for (const stat of tree(roots).values()) total += stat.self + stat.reaped;
  return total;
}

/**
 * Stops (SIGSTOP) every process of these trees and returns the function that lets them go on
 * (SIGCONT). The servers that are not being measured share the measured server's core, and an idle
 * one is not idle: timers, a checkpoint thread, PostgreSQL's background processes, and in
 * PostgreSQL mode the PAT cache's re-reads of every cached token twice a second.
 */
export function pauseTrees(roots: number[]): () => void {
  const pids = [...tree(roots).keys()];
  const signal = (name: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, name);
      } catch {
        // Gone already (a PostgreSQL backend that ended): nothing to stop or resume.
      }
    }
  };
  signal('SIGSTOP');
  return () => signal('SIGCONT');
}

/** A before/after probe around one measurement. */
export class CpuProbe {
  readonly #servers: number[];
  readonly #root: number;
  #t0 = 0;
  #machine0: MachineCpu = machineCpu();
  #ours0 = 0;
  #server0 = 0;

  /** `servers`: the process trees whose CPU is the cost of the system under test. */
  /** `root`: the harness process whose whole tree is "ours" (a child harness passes the parent's pid). */
  constructor(servers: number[], root = Number(process.env.BENCH_ROOT_PID ?? process.pid)) {
    this.#servers = servers;
    this.#root = root;
  }

  start() {
    this.#machine0 = machineCpu();
    // Everything this harness started (servers, databases, wrk) counts as "ours".
    this.#ours0 = treeTicks([this.#root]);
    this.#server0 = treeTicks(this.#servers);
    this.#t0 = performance.now();
    return this;
  }

  stop(): { seconds: number; serverTicks: number; otherCores: number; softirqCores: number; stealCores: number } {
    const seconds = (performance.now() - this.#t0) / 1000;
    const server = treeTicks(this.#servers) - this.#server0;
    const ours = treeTicks([this.#root]) - this.#ours0;
    const machine = machineCpu();
    const busy = machine.busy - this.#machine0.busy;
    const perSecond = (ticks: number) => ticks / TICKS_PER_SECOND / seconds;
    return {
      seconds,
      serverTicks: server,
      otherCores: Math.max(0, perSecond(busy - ours)),
      softirqCores: perSecond(machine.softirq - this.#machine0.softirq),
      stealCores: perSecond(machine.steal - this.#machine0.steal),
    };
  }
}

export interface ThreadCpu {
  tid: number;
  /** The thread's name (/proc/<pid>/task/<tid>/comm): MainThread, V8Worker, a worker's `name`, … */
  name: string;
  nice: number;
  /** utime + stime */
  ticks: number;
}

/** Every live thread of one process with its name, nice value and CPU ticks. */
export function threadCpu(pid: number): ThreadCpu[] {
  const threads: ThreadCpu[] = [];
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const text = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      // fields[0] is state (field 3): utime 14 → 11, stime 15 → 12, nice 19 → 16.
      threads.push({
        tid: Number(tid),
        name,
        nice: Number(fields[16]),
        ticks: Number(fields[11]) + Number(fields[12]),
      });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}
