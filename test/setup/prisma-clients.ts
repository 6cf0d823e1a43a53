import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Global setup: the Prisma clients the Prisma store's tests import, generated from their checked-in schemas. */
export default function setup() {
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../../scripts/prisma-test-clients.mjs', import.meta.url))],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
}
