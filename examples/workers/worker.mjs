// A worker: runs the receiver's handlers on the queued events, retrying failures with backoff; an event that
// fails every attempt goes to the engine's dead-letter and onError is told. Run as many as you need:
// `node examples/workers/worker.mjs` (after `npm run build`); CONCURRENCY (default 16), ENGINE, REDIS_URL /
// DATABASE_URL configure it.
import { createWorker, queue, receiver } from './queue.mjs';

const worker = await createWorker({ receiver, queue, concurrency: Number(process.env.CONCURRENCY ?? 16) });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await worker.close({ timeoutMs: 10_000 });
    await queue.close();
    process.exit(0);
  });
}
// Only once the handlers are in place: whoever waits for this line may send a signal at once.
console.log('Worker running; Ctrl-C lets running jobs finish (10 s at most) and leaves the others queued.');
