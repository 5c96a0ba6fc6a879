// Ratio figures over rounds (bench/lib/ratios.ts): median and spread, and the worst round where it counts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judgedRatio, overRounds, worstRound } from '../../bench/lib/ratios.ts';
import { judgeAgainstTable } from '../../bench/lib/targets.ts';

describe('ratios over rounds', () => {
  it('the median of an odd and of an even number of rounds, and their min–max', () => {
    assert.deepEqual(overRounds([0.5, 0.3, 0.9]), { ratio: 0.5, ratioRange: [0.3, 0.9] });
    const even = overRounds([1.25, 1.0, 2.0, 1.75]);
    assert.equal(even.ratio, 1.5);
    assert.deepEqual(even.ratioRange, [1.0, 2.0]);
  });

  it('no rounds (or none finite) give no figure', () => {
    assert.deepEqual(overRounds([]), { ratio: null, ratioRange: null });
    assert.deepEqual(overRounds([Number.NaN, Infinity]), { ratio: null, ratioRange: null });
  });

  it('the worst round is the lowest where higher is better and the highest where lower is better', () => {
    assert.equal(worstRound([0.4, 0.7], 'higher'), 0.4);
    assert.equal(worstRound([1.1, 2.6], 'lower'), 2.6);
    assert.equal(judgedRatio({ ratio: 1.3, ratioRange: [1.1, 2.6] }, 'lower', 'worst'), 2.6);
    assert.equal(judgedRatio({ ratio: 1.3, ratioRange: [1.1, 2.6] }, 'lower'), 1.3);
  });

  it('token issuance is judged on its worst round: one stalled round fails a median that would pass the aim', () => {
    const rounds = [1.1, 1.2, 1.3, 1.2, 2.4];
    const [m] = judgeAgainstTable([
      {
        id: 'issuance_p99',
        label: 'issuance',
        value: 1,
        unit: 'ms',
        baseline: 1,
        ...overRounds(rounds),
        rounds: 5,
        dropped: 0,
      },
    ]);
    assert.equal(m.ratio, 1.2);
    assert.equal(m.judged, 2.4);
    assert.equal(m.verdict, 'FAIL');
    const [calm] = judgeAgainstTable([
      { ...m, ...overRounds([1.1, 1.2, 1.3, 1.2, 1.9]), target: undefined, verdict: undefined },
    ]);
    assert.equal(calm.verdict, 'PASS must');
  });

  it('other ratios are judged on their median, not their worst round', () => {
    const [m] = judgeAgainstTable([
      {
        id: 'me_sqlite',
        label: 'me',
        value: 1,
        unit: 'req/s',
        baseline: 1,
        ...overRounds([0.4, 0.6, 0.8]),
        rounds: 3,
        dropped: 0,
      },
    ]);
    assert.equal(m.judged, 0.6);
    assert.equal(m.verdict, 'PASS must');
  });
});
