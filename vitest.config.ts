import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every worker's output is captured and scanned for test secrets when the run ends: a leaked secret fails the run.
    globalSetup: ['test/setup/secret-scan.ts', 'test/setup/prisma-clients.ts'],
    setupFiles: ['test/setup/log-capture.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
