// A flame graph of a call tree (bench/lib/cpuprofile.ts) as a self-contained SVG: the root at the
// bottom, each frame as wide as its total time (its own and its callees'), callees stacked above
// their caller, coloured by origin, with a <title> per frame for the hover text and a legend of the
// origins' self-time shares. Hand-written on purpose: the profile format is plain JSON and a flame
// graph is about 150 lines, so neither a plotting service (the bench runs offline) nor another
// dependency (flamegraph.pl needs Perl and folded stacks; 0x and clinic bring their own profilers and
// a few hundred packages) earns its place.
import type { Frame } from './cpuprofile.ts';

export interface FlameGraphOptions {
  title: string;
  /** A line under the title (what was measured, on what machine). */
  subtitle?: string;
  width?: number;
  /** Frames narrower than this many pixels are not drawn (their time stays in their caller's width). */
  minWidthPx?: number;
  /** Fill colour per origin; origins not named get grey. */
  colors?: Record<string, string>;
  /** Legend entries: origin and its share of the whole (0–1). */
  legend?: [string, number][];
}

const ROW = 17;
const FONT = 11;
/** Average advance of a character of the 11 px monospace font, to fit labels without measuring text. */
const CHAR_PX = 6.6;

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function depthOf(frame: Frame): number {
  return 1 + frame.children.reduce((max, c) => Math.max(max, depthOf(c)), 0);
}

function label(name: string, widthPx: number): string {
  const fits = Math.floor((widthPx - 6) / CHAR_PX);
  if (fits < 3) return '';
  return name.length <= fits ? name : `${name.slice(0, fits - 1)}…`;
}

export function renderFlameGraph(root: Frame, options: FlameGraphOptions): string {
  const width = options.width ?? 1200;
  const minWidth = options.minWidthPx ?? 0.5;
  const legendRows = options.legend ? Math.ceil(options.legend.length / 3) : 0;
  const top = 48 + legendRows * ROW;
  const depth = depthOf(root);
  const height = top + depth * ROW + 10;
  const scale = root.total > 0 ? (width - 20) / root.total : 0;
  const color = (origin: string) => options.colors?.[origin] ?? '#c8c8c8';
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="monospace" font-size="${FONT}">`,
    `<rect width="100%" height="100%" fill="#fdfdf8"/>`,
    `<text x="10" y="20" font-size="15">${escapeXml(options.title)}</text>`,
  ];
  if (options.subtitle) out.push(`<text x="10" y="38" fill="#555">${escapeXml(options.subtitle)}</text>`);
  (options.legend ?? []).forEach(([origin, share], i) => {
    const x = 10 + (i % 3) * ((width - 20) / 3);
    const y = 46 + Math.floor(i / 3) * ROW;
    out.push(
      `<rect x="${x}" y="${y}" width="12" height="12" fill="${color(origin)}"/>`,
      `<text x="${x + 16}" y="${y + 10}">${escapeXml(`${(share * 100).toFixed(1)}% ${origin}`)}</text>`,
    );
  });
  const draw = (frame: Frame, x: number, level: number) => {
    const w = frame.total * scale;
    if (w < minWidth) return;
    const y = height - 10 - (level + 1) * ROW;
    const share = root.total > 0 ? (frame.total / root.total) * 100 : 0;
    const title = `${frame.name} — ${share.toFixed(2)}% of the samples (self ${(frame.self / 1000).toFixed(1)} ms, total ${(frame.total / 1000).toFixed(1)} ms); ${frame.origin}`;
    out.push(
      `<g><title>${escapeXml(title)}</title>` +
        `<rect x="${x.toFixed(2)}" y="${y}" width="${w.toFixed(2)}" height="${ROW - 1}" fill="${color(frame.origin)}" rx="1"/>` +
        (label(frame.name, w)
          ? `<text x="${(x + 3).toFixed(2)}" y="${y + 12}">${escapeXml(label(frame.name, w))}</text>`
          : '') +
        `</g>`,
    );
    // Callees left to right, largest first, as flame graphs order them.
    let cx = x;
    for (const child of [...frame.children].sort((a, b) => b.total - a.total)) {
      draw(child, cx, level + 1);
      cx += child.total * scale;
    }
  };
  draw(root, 10, 0);
  out.push('</svg>');
  return out.join('\n') + '\n';
}
