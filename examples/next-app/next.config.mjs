import { fileURLToPath } from 'node:url';

// The repository root: it holds node_modules (next, react) and is the messaging-webhooks package itself.
const root = fileURLToPath(new URL('../..', import.meta.url));

/** @type {import('next').NextConfig} */
export default {
  turbopack: { root },
  outputFileTracingRoot: root,
};
