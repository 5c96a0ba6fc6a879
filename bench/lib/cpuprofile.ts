// Reading a V8 CPU profile (`node --cpu-prof`, a .cpuprofile: JSON with a call tree of nodes, the
// node sampled at each tick and the time between ticks) into a call tree of frames with self and
// total time, restricted to a window of the profile's clock, and grouping self time by where the code
// comes from (Node's HTTP stack, the service's own src/, Fastify, pino, SQLite and Kysely, GC).
// The profile's clock is CLOCK_MONOTONIC in µs, the clock of process.hrtime in every process on
// the machine, so the harness can name the window it measured in.

export interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based, -1 for native code. */
  lineNumber: number;
  columnNumber: number;
  scriptId?: string;
}

export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  name: string;
  /** Where the code comes from (ORIGINS); native code without a script takes its caller's. */
  origin: string;
  /** µs sampled in this frame itself, and in it and everything it called. */
  self: number;
  total: number;
  children: Frame[];
}

/** How a call frame is named and where it comes from; origin null: the caller's (native code). */
export type Describe = (frame: CallFrame) => { name: string; origin: string | null };

export const ORIGINS = {
  /** Node's _http_*, net and streams, and the native socket writes under them (the kernel's send). */
  http: 'node:http and its socket',
  ours: 'the service (src/)',
  /** With find-my-way, fast-json-stringify and the serialisers it compiles, @fastify/* plugins. */
  fastify: 'Fastify',
  /** With sonic-boom. */
  pino: 'pino',
  /** With the service's node:sqlite driver (src/db/node-sqlite.ts) and the native calls it makes. */
  sqlite: 'SQLite and Kysely',
  gc: 'garbage collection',
  /** Timers, events, process.nextTick, buffers, crypto's JavaScript side. */
  node: 'other Node internals',
  /** V8 and native code outside any JavaScript frame ("(program)"). */
  program: '(program)',
  other: 'other packages',
  idle: 'idle',
} as const;

const FASTIFY =
  /node_modules\/(fastify|find-my-way|avvio|@fastify\/[^/]+|fast-json-stringify|fast-querystring|fast-uri|fast-decode-uri-component|light-my-request|toad-cache|secure-json-parse|content-type|process-warning|abstract-logging|rfdc|safe-regex2|ret|json-schema-ref-resolver)\//;
const PINO =
  /node_modules\/(pino|sonic-boom|pino-std-serializers|quick-format-unescaped|fast-redact|@pinojs\/[^/]+|thread-stream|safe-stable-stringify|on-exit-leak-free|atomic-sleep)\//;
const NODE_HTTP =
  /^node:(_http_\w+|http|https|net|stream|internal\/(http|streams\/|stream_base_commons|net|js_stream_socket|child_process))/;

/**
 * The origin of code from its source: a `node:` URL, or a file path (an original source named by the
 * bundle's source map, or a file loaded as it is). null: no script (native code, the caller's origin).
 */
export function originOf(functionName: string, source: string): string | null {
  if (functionName === '(garbage collector)') return ORIGINS.gc;
  if (functionName === '(idle)') return ORIGINS.idle;
  if (functionName === '(program)') return ORIGINS.program;
  if (functionName === '(root)') return ORIGINS.other;
  // Functions compiled at run time by fast-json-stringify (the routes' serialisers) have no script URL.
  if (/^anonymous\d+$/.test(functionName)) return ORIGINS.fastify;
  if (!source) return null;
  // The driver's calls into node:sqlite are native frames: they take the driver's origin.
  if (source === 'node:sqlite' || /node_modules\/kysely\/|(^|\/)src\/db\/node-sqlite\.ts$/.test(source))
    return ORIGINS.sqlite;
  if (NODE_HTTP.test(source)) return ORIGINS.http;
  if (source.startsWith('node:')) return ORIGINS.node;
  if (FASTIFY.test(source)) return ORIGINS.fastify;
  if (PINO.test(source)) return ORIGINS.pino;
  if (/(^|\/)src\//.test(source) && !source.includes('node_modules/')) return ORIGINS.ours;
  return ORIGINS.other;
}

/** Self µs per profile node, counting only the samples taken within [from, to] (µs, the profile's clock). */
export function selfTimes(profile: CpuProfile, window?: { from: number; to: number }): Map<number, number> {
  const self = new Map<number, number>();
  let t = profile.startTime;
  const n = profile.samples.length;
  for (let i = 0; i < n; i++) {
    t += profile.timeDeltas[i];
    // A sample stands for the time until the next one (the last: until the profile ends).
    const next = i + 1 < n ? t + profile.timeDeltas[i + 1] : profile.endTime;
    if (window && (t < window.from || t > window.to)) continue;
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + Math.max(0, next - t));
  }
  return self;
}

/**
 * The profile's call tree with self and total µs per frame; children that are the same function
 * (same name and origin) under one parent are merged, and frames with no time are left out.
 */
export function callTree(profile: CpuProfile, describe: Describe, window?: { from: number; to: number }): Frame {
  const self = selfTimes(profile, window);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const build = (id: number, parentOrigin: string): Frame => {
    const node = byId.get(id)!;
    const { name, origin } = describe(node.callFrame);
    const frame: Frame = { name, origin: origin ?? parentOrigin, self: self.get(id) ?? 0, total: 0, children: [] };
    for (const childId of node.children ?? []) {
      const child = build(childId, frame.origin);
      if (child.total === 0) continue;
      const same = frame.children.find((c) => c.name === child.name && c.origin === child.origin);
      if (same) merge(same, child);
      else frame.children.push(child);
    }
    frame.total = frame.self + frame.children.reduce((sum, c) => sum + c.total, 0);
    return frame;
  };
  const root = profile.nodes.find((node) => node.callFrame.functionName === '(root)') ?? profile.nodes[0];
  return build(root.id, ORIGINS.other);
}

function merge(into: Frame, from: Frame) {
  into.self += from.self;
  into.total += from.total;
  for (const child of from.children) {
    const same = into.children.find((c) => c.name === child.name && c.origin === child.origin);
    if (same) merge(same, child);
    else into.children.push(child);
  }
}

/** The tree without the frames named `name` directly under the root (e.g. "(idle)"), totals adjusted. */
export function without(root: Frame, name: string): Frame {
  const children = root.children.filter((c) => c.name !== name);
  return { ...root, children, total: root.self + children.reduce((sum, c) => sum + c.total, 0) };
}

/** Self µs summed per origin, largest first. */
export function selfByOrigin(root: Frame): [string, number][] {
  const sums = new Map<string, number>();
  const walk = (frame: Frame) => {
    if (frame.self) sums.set(frame.origin, (sums.get(frame.origin) ?? 0) + frame.self);
    for (const child of frame.children) walk(child);
  };
  walk(root);
  return [...sums].sort((a, b) => b[1] - a[1]);
}

/** Self µs summed per name within one origin (the largest functions of, say, src/), largest first. */
export function selfByName(root: Frame, origin: string): [string, number][] {
  const sums = new Map<string, number>();
  const walk = (frame: Frame) => {
    if (frame.self && frame.origin === origin) sums.set(frame.name, (sums.get(frame.name) ?? 0) + frame.self);
    for (const child of frame.children) walk(child);
  };
  walk(root);
  return [...sums].sort((a, b) => b[1] - a[1]);
}
