/** How far a replay or purge got: `done` of `total` dead letters handled (acted on or skipped). */
export interface DeadLetterProgress {
  done: number;
  total: number;
}

export interface ChangeOptions {
  /** Told after each page of dead letters (`'all'`) or each id; a throwing listener stops nothing. */
  onProgress?: (progress: DeadLetterProgress) => void;
}

/** Dead letters `'all'` holds in memory at once, payloads included. */
export const ALL_PAGE_SIZE = 50;

export type Progress = (done: number, total: number) => void;

export function progressOf({ onProgress }: ChangeOptions): Progress {
  return (done, total) => {
    try {
      onProgress?.({ done, total });
    } catch {
      // A progress display that fails does not stop the change it reports on.
    }
  };
}

/**
 * Every dead letter a page at a time, oldest first (`list`), each page changed before the next is read: what
 * the change removes leaves the list, what it skips (`change` answers how many) stays ahead of the next page.
 * Only those there at the start are taken: one that fails again after its replay joins the end, past them.
 */
export async function eachPage<T>(
  count: () => Promise<number>,
  list: (limit: number, offset: number) => Promise<T[]>,
  change: (page: T[]) => Promise<number>,
  progress: Progress,
): Promise<void> {
  const total = await count();
  let done = 0;
  let stayed = 0;
  while (done < total) {
    const page = await list(Math.min(ALL_PAGE_SIZE, total - done), stayed);
    if (page.length === 0) break;
    stayed += await change(page);
    done += page.length;
    progress(done, total);
  }
}

/** Changes of one page run this many at a time: each is exclusive in the engine on its own. */
const LANES = 4;

/** `work` on each item, LANES at a time; the first failure stops the lanes taking more and rejects. */
export async function inLanes<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LANES, items.length) }, lane));
}
