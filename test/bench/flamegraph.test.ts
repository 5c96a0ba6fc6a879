// Reading a V8 CPU profile and drawing its flame graph (bench/lib/cpuprofile.ts, bench/lib/flamegraph.ts),
// from a small synthetic .cpuprofile whose times are known.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ORIGINS,
  callTree,
  originOf,
  selfByOrigin,
  without,
  type CallFrame,
  type CpuProfile,
} from '../../bench/lib/cpuprofile.ts';
import { renderFlameGraph } from '../../bench/lib/flamegraph.ts';

const frame = (functionName: string, url = '', lineNumber = 0): CallFrame => ({
  functionName,
  url,
  lineNumber,
  columnNumber: 0,
});

// (root) ─┬─ serve (src/serve.ts) ─┬─ parse<json> (node:_http_common)        self 30 ms
//         │                        └─ handle (src/app.ts) self 10 ms ── hash (native) self 20 ms
//         └─ (idle) 40 ms
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', '', -1), children: [2, 6] },
    { id: 2, callFrame: frame('serve', 'file:///app/src/serve.ts'), children: [3, 4] },
    { id: 3, callFrame: frame('parse<json>', 'node:_http_common') },
    { id: 4, callFrame: frame('handle', 'file:///app/src/app.ts'), children: [5] },
    { id: 5, callFrame: frame('hash', '', -1) },
    { id: 6, callFrame: frame('(idle)', '', -1) },
  ],
  startTime: 1_000_000,
  // Ten samples 10 ms apart; each stands for the 10 ms until the next one.
  samples: [3, 3, 3, 4, 5, 5, 6, 6, 6, 6],
  timeDeltas: [0, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000],
  endTime: 1_100_000,
};

const describeFrame = (f: CallFrame) => ({
  name: f.functionName,
  origin: originOf(f.functionName, f.url.replace('file:///app/', '')),
});

/** The width of the frame whose hover text starts with `name`. */
function widthOf(svg: string, name: string): number {
  const match = new RegExp(`<title>${name} — [^<]*</title><rect [^>]*width="([0-9.]+)"`).exec(svg);
  assert.ok(match, `no frame ${name} in the SVG`);
  return Number(match[1]);
}

describe('CPU profile → call tree', () => {
  it('self and total time per frame; native code takes its caller’s origin; idle can be left out', () => {
    const root = without(callTree(PROFILE, describeFrame), '(idle)');
    assert.equal(root.total, 60_000);
    const serve = root.children.find((c) => c.name === 'serve')!;
    assert.equal(serve.total, 60_000);
    const handle = serve.children.find((c) => c.name === 'handle')!;
    assert.deepEqual([handle.self, handle.total], [10_000, 30_000]);
    assert.equal(handle.children[0].origin, ORIGINS.ours);
    assert.deepEqual(Object.fromEntries(selfByOrigin(root)), { [ORIGINS.ours]: 30_000, [ORIGINS.http]: 30_000 });
  });

  it('counts only the samples inside the window', () => {
    // Samples 4 and 5 (hash, at 1.04 and 1.05 s on the profile's clock) only.
    const root = callTree(PROFILE, describeFrame, { from: 1_035_000, to: 1_055_000 });
    assert.equal(root.total, 20_000);
    assert.deepEqual(selfByOrigin(root), [[ORIGINS.ours, 20_000]]);
  });

  it('tells the origins apart by source', () => {
    assert.equal(originOf('write', 'node:_http_outgoing'), ORIGINS.http);
    assert.equal(originOf('onwrite', 'node:internal/streams/writable'), ORIGINS.http);
    assert.equal(originOf('nextTick', 'node:internal/process/task_queues'), ORIGINS.node);
    assert.equal(originOf('resolve', 'src/tokens/pat-resolver.ts'), ORIGINS.ours);
    assert.equal(originOf('dataVersion', 'src/db/node-sqlite.ts'), ORIGINS.sqlite);
    assert.equal(originOf('compile', 'node_modules/kysely/dist/esm/x.js'), ORIGINS.sqlite);
    assert.equal(originOf('Reply.header', 'node_modules/fastify/lib/reply.js'), ORIGINS.fastify);
    assert.equal(originOf('anonymous0', ''), ORIGINS.fastify);
    assert.equal(originOf('write', 'node_modules/sonic-boom/index.js'), ORIGINS.pino);
    assert.equal(originOf('(garbage collector)', ''), ORIGINS.gc);
    assert.equal(originOf('hash', ''), null);
    assert.equal(originOf('x', 'node_modules/undici/index.js'), ORIGINS.other);
  });
});

describe('flame graph', () => {
  it('draws every frame with its name, as wide as its self and callees’ time', () => {
    const root = without(callTree(PROFILE, describeFrame), '(idle)');
    const svg = renderFlameGraph(root, {
      title: 'a <test> profile',
      width: 620,
      colors: { [ORIGINS.ours]: '#123456' },
    });
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.match(svg, /<\/svg>\n$/);
    assert.match(svg, /a &#60;test&#62; profile/);
    assert.doesNotMatch(svg, /idle/);
    // 600 px for 60 ms: 10 px per ms.
    assert.equal(widthOf(svg, '\\(root\\)'), 600);
    assert.equal(widthOf(svg, 'serve'), 600);
    assert.equal(widthOf(svg, 'parse&#60;json&#62;'), 300);
    assert.equal(widthOf(svg, 'handle'), 300);
    assert.equal(widthOf(svg, 'hash'), 200);
    assert.match(svg, /<title>handle — 50\.00% of the samples \(self 10\.0 ms, total 30\.0 ms\)/);
    assert.match(svg, /fill="#123456"/);
    // A callee sits one row above its caller, starting at its left edge.
    const box = (name: string) => {
      const m = new RegExp(`<title>${name} — [^<]*</title><rect x="([0-9.]+)" y="([0-9.]+)"`).exec(svg)!;
      return { x: Number(m[1]), y: Number(m[2]) };
    };
    assert.equal(box('hash').x, box('handle').x);
    assert.ok(box('hash').y < box('handle').y);
    assert.ok(box('handle').y < box('serve').y);
  });

  it('leaves out frames narrower than the minimum, and labels only frames wide enough', () => {
    const root = without(callTree(PROFILE, describeFrame), '(idle)');
    const svg = renderFlameGraph(root, { title: 't', width: 80, minWidthPx: 25 });
    // 60 px for 60 ms: hash (20 px) is not drawn, handle (30 px) is, without room for its name.
    assert.doesNotMatch(svg, /<title>hash/);
    assert.match(svg, /<title>handle/);
    assert.doesNotMatch(svg, />handle</);
  });
});
