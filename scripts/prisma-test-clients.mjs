// Generates the Prisma clients the tests import (test/stores/prisma/generated/, not committed) from the checked-in
// schemas, each only when its schema changed since. `prisma generate` needs no engine download with the
// `prisma-client` generator; PRISMA_SCHEMA_ENGINE_BINARY points the CLI's engine check at a binary that exists,
// as the schema engine (migrations) is never used here. Run by `npm run typecheck` and the tests' global setup.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, 'test/stores/prisma');

export function generatePrismaTestClients() {
  for (const database of ['postgres', 'mysql']) {
    const schema = join(dir, `${database}.prisma`);
    const stamp = join(dir, 'generated', database, '.schema-hash');
    const hash = createHash('sha256').update(readFileSync(schema)).digest('hex');
    if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) continue;
    execFileSync(
      process.execPath,
      [join(root, 'node_modules/prisma/build/index.js'), 'generate', '--schema', schema],
      {
        cwd: root,
        env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    writeFileSync(stamp, hash);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) generatePrismaTestClients();
