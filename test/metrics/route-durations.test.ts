// The request-duration histogram kept by the service (src/metrics/route-durations.ts) writes exactly the
// samples the client library's own Histogram writes for the same observations.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram, Registry } from '@prometheus-io/client';
import { RequestDurations } from '../../src/metrics/route-durations.ts';

const BOUNDS = [0.001, 0.01, 0.1, 1];

describe('RequestDurations', () => {
  it('exposes what the library Histogram exposes for the same observations, bounds included', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const durations = new RequestDurations(BOUNDS, ours);
    const library = new Histogram({
      name: 'http_request_duration_seconds',
      help: durations.help,
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: BOUNDS,
      registers: [theirs],
    });
    const me = durations.route('/api/v1/me/');
    const teams = durations.route('/api/v1/teams/:id/');
    const observations: [typeof me, string, string, number, number][] = [
      [me, '/api/v1/me/', 'GET', 200, 0.0004],
      [me, '/api/v1/me/', 'GET', 200, 0.001],
      [me, '/api/v1/me/', 'GET', 200, 0.05],
      [me, '/api/v1/me/', 'HEAD', 200, 0.002],
      [me, '/api/v1/me/', 'GET', 401, 0.5],
      [teams, '/api/v1/teams/:id/', 'GET', 404, 3],
      [teams, '/api/v1/teams/:id/', 'GET', 404, 1],
    ];
    for (const [series, route, method, status, seconds] of observations) {
      series.observe(method, status, seconds);
      library.observe({ method, route, status_code: String(status) }, seconds);
    }
    const sorted = (text: string) => text.trim().split('\n').sort();
    assert.deepEqual(sorted(await ours.metrics()), sorted(await theirs.metrics()));
    assert.match(
      await ours.metrics(),
      /^http_request_duration_seconds_bucket\{le="0.001",method="GET",route="\/api\/v1\/me\/",status_code="200"\} 2$/m,
    );
    ours.resetMetrics();
    assert.match(
      await ours.metrics(),
      /^http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/me\/",status_code="200"\} 0$/m,
    );
  });
});
