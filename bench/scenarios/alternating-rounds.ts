// The rounds of a section that compares set-ups measured one after the other (the metrics and
// pat-cache sections): a warm-up of each, then rounds that measure every key in turn, the order
// reversed every other round so that no key always goes first, until plan.rounds rounds are clean
// (no other process took the server's core) or plan.maxRounds have run. `around` wraps each round:
// the metrics section counts its scrapes across it.
import type { WrkResult } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';
import type { Sample } from './http.ts';

type RoundResults = Record<string, WrkResult>;

export async function alternatingRounds(
  plan: Plan,
  keys: readonly string[],
  measure: (key: string, seconds: number) => Promise<WrkResult>,
  around: (round: () => Promise<RoundResults>) => Promise<RoundResults> = (round) => round(),
): Promise<Sample[]> {
  plan.log(`warm-up ${plan.warmupSeconds} s each: ${keys.join(', ')}`);
  for (const key of keys) await measure(key, plan.warmupSeconds);
  const samples: Sample[] = [];
  for (let round = 0; round < plan.maxRounds; round++) {
    const results = await around(async () => {
      const measured: RoundResults = {};
      for (const key of round % 2 ? [...keys].reverse() : keys) measured[key] = await measure(key, plan.seconds);
      return measured;
    });
    samples.push({ round: round + 1, results });
    plan.log(
      `round ${round + 1}: ${keys.map((k) => `${k} ${Math.round(results[k].rps)}/s${results[k].clean ? '' : ` (other ${results[k].otherCores.toFixed(2)} cores)`}`).join('; ')}`,
    );
    const clean = samples.filter((s) => keys.every((k) => s.results[k].clean)).length;
    if (round + 1 >= plan.rounds && (clean >= plan.rounds || plan.quick)) break;
  }
  return samples;
}
