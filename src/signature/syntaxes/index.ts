import { plainSyntax } from './plain.js';
import type { SyntaxSpec } from './scan.js';
import { timestampedSyntax } from './t-v1.js';
import { versionedListSyntax } from './v1-list.js';

export { isDigits, type SignatureScan, type SyntaxSpec } from './scan.js';

/**
 * Every signature syntax by the name a profile config gives it. A new syntax is one file exporting a
 * SyntaxSpec and one line here: the config check, the profile, its messages and the diagnostics read this table.
 */
export const syntaxes = {
  't-v1': timestampedSyntax,
  'v1-list': versionedListSyntax,
  plain: plainSyntax,
} as const satisfies Record<string, SyntaxSpec>;

export type SignatureSyntax = keyof typeof syntaxes;

export const syntaxNames = Object.keys(syntaxes) as SignatureSyntax[];
