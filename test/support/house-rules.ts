// The house rules test/unit/house.test.ts enforces, and docs/development.md states (test/docs checks the two agree).
export const MAX_FILE_LINES = 300;
export const MAX_FUNCTION_LINES = 80;

/**
 * The rooms of src/, lowest first. A room imports only its own room or a lower one, types included: the types
 * the rooms share (the handler and error contexts, the reason codes, the outcome) are the contract's vocabulary,
 * and live in contract/.
 */
export const ROOMS = [
  'base',
  'events',
  'contract',
  'crypto',
  'signature',
  'stores',
  'tracker',
  'claims',
  'pipeline',
  'durable',
  'observability',
  'receiver',
  'sending',
  'emulator',
  'cli',
];
