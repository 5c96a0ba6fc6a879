// Waiting for what a test cannot be told about directly: a row a worker writes, a delivery arriving.

/** Polls `check` until it returns a truthy value (or fails after `timeoutMs`). */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  label = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
