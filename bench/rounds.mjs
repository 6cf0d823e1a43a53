// Side-by-side sampling shared by the in-process benches: every contender warmed up, then sampled once per round
// in an order that rotates each round, so drift of the machine's speed falls on all of them alike.

/** The process's CPU time so far (user and system), in µs. */
export function cpuMicros() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** CPU µs per item of `batch` (made before the clock starts) that `run` handles in one go. */
export async function cpuPerItem(run, batch) {
  const start = cpuMicros();
  await run(batch);
  return (cpuMicros() - start) / batch.length;
}

/** The median of a list of numbers. */
export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Runs `sample(contenders[name])` `warmups` times per contender, then `rounds` times each, rotating the order;
 * `afterWarmUp` runs between the two. Returns the samples by name.
 */
export async function interleavedRounds(contenders, sample, { rounds, warmups = 3, afterWarmUp } = {}) {
  const names = Object.keys(contenders);
  for (const name of names) for (let i = 0; i < warmups; i++) await sample(contenders[name]);
  afterWarmUp?.();
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length];
      samples[name].push(await sample(contenders[name]));
    }
  }
  return samples;
}
