import type { EnqueueResult } from '../port.js';

/** What one statement answers for each key it was given: whether its row was (re)written, else its state. */
export interface AdmissionRow {
  key: string;
  admitted: boolean;
  state: string | null;
}

/** Writes the rows of many events in one statement (keys and jobs as stored, one entry per key). */
export type AdmitMany = (keys: string[], jobs: string[]) => Promise<AdmissionRow[]>;

/** Most events in one statement. */
export const MOST_PER_WRITE = 256;
/** Statements in flight at once: one commits while the next fills. */
export const WRITES_IN_FLIGHT = 2;
/**
 * A statement that has not answered after this long stops holding its place, so one hung connection does not
 * stop every later handoff (each caller's own deadline still answers it).
 */
export const WRITE_SLOT_MS = 5000;

interface Waiting {
  key: string;
  job: string;
  resolve(result: EnqueueResult): void;
  reject(error: unknown): void;
}

/**
 * The ledger's admissions, grouped: handoffs that arrive while WRITES_IN_FLIGHT statements are out wait for the
 * next one, which writes them all in one round trip and one commit. A handoff that finds nothing in flight is
 * written at once, so one delivery alone waits no longer than it would by itself.
 */
export function groupedAdmissions(write: AdmitMany): (key: string, job: string) => Promise<EnqueueResult> {
  const waiting: Waiting[] = [];
  let writing = 0;

  const flush = () => {
    while (writing < WRITES_IN_FLIGHT && waiting.length > 0) {
      const batch = waiting.splice(0, MOST_PER_WRITE);
      writing++;
      let freed = false;
      const free = () => {
        if (freed) return;
        freed = true;
        clearTimeout(timer);
        writing--;
        flush();
      };
      const timer = setTimeout(free, WRITE_SLOT_MS);
      timer.unref?.();
      settle(write, batch).finally(free);
    }
  };

  return (key, job) =>
    new Promise<EnqueueResult>((resolve, reject) => {
      waiting.push({ key, job, resolve, reject });
      flush();
    });
}

async function settle(write: AdmitMany, batch: Waiting[]): Promise<void> {
  // One row per key in a statement (PostgreSQL refuses to change a row twice in one): the first copy of an
  // event decides, the others in the batch are answered as copies that found it.
  const byKey = new Map<string, Waiting[]>();
  for (const waiting of batch) {
    const copies = byKey.get(waiting.key);
    if (copies) copies.push(waiting);
    else byKey.set(waiting.key, [waiting]);
  }
  const keys = [...byKey.keys()];
  let rows: AdmissionRow[];
  try {
    rows = await write(
      keys,
      keys.map((key) => (byKey.get(key) as Waiting[])[0]?.job as string),
    );
  } catch (error) {
    for (const waiting of batch) waiting.reject(error);
    return;
  }
  const answered = new Map(rows.map((row) => [row.key, row]));
  for (const [key, copies] of byKey) {
    const first = outcome(answered.get(key));
    copies.forEach((waiting, index) => {
      waiting.resolve(index > 0 && first === 'enqueued' ? 'in_progress' : first);
    });
  }
}

function outcome(row: AdmissionRow | undefined): EnqueueResult {
  if (row?.admitted) return 'enqueued';
  // Not there when the statement began and not written by it: another handoff wrote it meanwhile.
  return row?.state === 'completed' || row?.state === 'dead' ? 'duplicate' : 'in_progress';
}
