/** Polls `probe` every 25 ms until it gives a value (returned), or fails after `timeoutMs` naming `what`. */
export async function waitFor<T>(probe: () => Promise<T | undefined | false | null>, timeoutMs = 10_000, what = 'a condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
