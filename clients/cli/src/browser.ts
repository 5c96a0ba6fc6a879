// Opens the verification page in the person's browser, when there is one to open: never without a
// display (an SSH session, CI) — then the printed address is the way. BROWSER names the program when
// set, as many tools allow; otherwise the platform's opener.
import { spawn } from 'node:child_process';

export function browserCommand(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
): [string, string[]] | null {
  if (platform === 'win32') return [env.BROWSER || 'explorer', []];
  if (platform === 'darwin') return [env.BROWSER || 'open', []];
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
  return [env.BROWSER || 'xdg-open', []];
}

/** Starts the browser on `url` without waiting for it; false when there is none to start. */
export function openBrowser(url: string, env: Record<string, string | undefined>): boolean {
  const command = browserCommand(env);
  if (!command) return false;
  try {
    const child = spawn(command[0], [...command[1], url], {
      detached: true,
      stdio: 'ignore',
      env: env as NodeJS.ProcessEnv,
    });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
