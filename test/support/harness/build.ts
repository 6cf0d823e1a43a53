import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { until } from '../until.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRIES = [
  'src/index.ts',
  'src/stores/redis.ts',
  'src/stores/postgres.ts',
  'src/stores/mysql.ts',
  'src/stores/knex.ts',
  'src/stores/kysely.ts',
  'src/stores/drizzle.ts',
  'src/stores/prisma.ts',
  'src/stores/typeorm.ts',
  'src/durable/bullmq/index.ts',
  'src/durable/pg-boss/index.ts',
  'src/durable/rabbitmq/index.ts',
  'src/durable/nats/index.ts',
  'src/observability/opentelemetry.ts',
  'src/tracker/index.ts',
  'adapters/node.ts',
];

/**
 * Compiles what the receiver processes import into a folder inside the repository (so that bare imports
 * resolve from node_modules), named by a hash of the sources: test files running at the same time share
 * one build and never see a half-written dist/. Type errors elsewhere in the project do not matter here.
 */
export async function buildPackage(): Promise<string> {
  const cache = join(ROOT, 'node_modules/.cache/messaging-webhooks-tests');
  const dir = join(cache, `dist-${await sourceHash()}`);
  const lock = `${dir}.lock`;
  await mkdir(cache, { recursive: true });
  // One build per source state: the first test file builds, the others wait for it (2 cores are few).
  const deadline = Date.now() + 120_000;
  while (!(await exists(join(dir, 'complete')))) {
    if (
      await mkdir(lock).then(
        () => true,
        () => false,
      )
    ) {
      try {
        if (!(await exists(join(dir, 'complete')))) await compile(dir);
      } finally {
        await rm(lock, { recursive: true, force: true });
      }
      break;
    }
    // Another test file is building: wait until its build is complete or its lock is gone.
    const stale = async () => {
      const held = await stat(lock).catch(() => undefined);
      return held !== undefined && Date.now() - held.mtimeMs > 60_000;
    };
    const complete = () => exists(join(dir, 'complete'));
    await until(async () => (await complete()) || !(await exists(lock)) || (await stale()), {
      timeoutMs: Math.max(deadline - Date.now(), 1),
      what: `another test's build of ${dir}`,
    });
    // A lock left by a test run that was killed while building.
    if (await stale()) await rm(lock, { recursive: true, force: true });
  }
  await pruneBuilds(cache);
  return dir;
}

async function compile(dir: string): Promise<void> {
  const scratch = `${dir}-${randomUUID().slice(0, 8)}`;
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const flags = ['--ignoreConfig', '--outDir', scratch, '--rootDir', ROOT, '--module', 'nodenext'];
  const more = ['--target', 'es2022', '--lib', 'es2023,dom', '--types', 'node', '--skipLibCheck'];
  let output = '';
  try {
    await promisify(execFile)(process.execPath, [tsc, ...flags, ...more, ...ENTRIES], { cwd: ROOT });
  } catch (error) {
    // Type errors still emit JavaScript; only missing output is fatal.
    output = String((error as { stdout?: string }).stdout ?? error);
  }
  for (const entry of ENTRIES) {
    const built = join(scratch, entry.replace(/\.ts$/, '.js'));
    if (!(await exists(built))) throw new Error(`The build did not produce ${built}:\n${output}`);
  }
  await writeFile(join(scratch, 'complete'), '');
  await rename(scratch, dir);
}

/** Builds of older sources, made over an hour ago: no test run still uses them. */
async function pruneBuilds(cache: string): Promise<void> {
  for (const name of await readdir(cache)) {
    const path = join(cache, name);
    const made = await stat(path).catch(() => undefined); // another run may be pruning too
    if (made && Date.now() - made.mtimeMs > 3_600_000) await rm(path, { recursive: true, force: true });
  }
}

async function sourceHash(): Promise<string> {
  // The entries too: a build made for fewer entries lacks the files of the new one.
  const hash = createHash('sha256').update(ENTRIES.join('\n'));
  for (const folder of ['src', 'adapters']) {
    const files = (await readdir(join(ROOT, folder), { recursive: true })).filter((f) => f.endsWith('.ts'));
    for (const file of files.sort()) hash.update(file).update(await readFile(join(ROOT, folder, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
