// `svc serve`: migrations, HTTP server, the in-process worker (unless --no-worker), graceful shutdown.
import type { AppContext } from './app-context.ts';
import { buildApp } from './app.ts';
import { migrateToLatest } from './db/migrate.ts';

export interface Running {
  url: string;
  stop(): Promise<void>;
}

export async function serve(
  ctx: AppContext,
  options: { worker: boolean; print?: (line: string) => void },
): Promise<Running> {
  const { config } = ctx;
  let app: Awaited<ReturnType<typeof buildApp>> | null = null;
  try {
    await migrateToLatest(ctx.db);
    app = await buildApp(ctx);
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // A failed start (port taken, database down) must not leave a pool or server keeping the
    // process alive: the CLI reports the error and exits 1.
    await app?.close().catch(() => {});
    await ctx.db.close().catch(() => {});
    throw error;
  }
  // The worker's modules (the webhook HTTP client, the mailer) are loaded only when it runs here.
  const worker = options.worker ? await startInProcessWorker(ctx) : null;
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
  print(`svc listening on http://${config.host}:${port} (BASE_URL ${config.baseUrl}), database ${ctx.db.dialect}`);
  if (config.nodeEnv !== 'production') {
    print('First steps:');
    print('  npm run svc -- user create --email you@example.com --password "a long password" --verified');
    print('  npm run svc -- token create --email you@example.com --name laptop --scopes "read:profile read:teams"');
    print(`  curl -H "Authorization: Bearer <token>" ${config.baseUrl}/api/v1/me/`);
  }
  let stopping: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    stop() {
      stopping ??= (async () => {
        await app.close();
        await worker?.stop();
        await ctx.db.close();
      })();
      return stopping;
    },
  };
}

async function startInProcessWorker(ctx: AppContext) {
  const [{ WORKER_TASKS }, { startWorker }] = await Promise.all([
    import('./worker-tasks.ts'),
    import('./worker/worker.ts'),
  ]);
  return startWorker(ctx, WORKER_TASKS);
}
