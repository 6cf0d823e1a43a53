/** Polls a condition the engine makes true a little later (a job's state, its counts), up to a limit. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Still not true after ${timeoutMs} ms: ${condition}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
