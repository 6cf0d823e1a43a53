import { plainSyntax } from './plain.js';
import type { SyntaxSpec } from './scan.js';
import { timestampedSyntax } from './t-v1.js';
import { versionedListSyntax } from './v1-list.js';

export { isDigits, type SignatureScan, type SyntaxSpec } from './scan.js';

/** The name a profile config gives a signature syntax: one per line of the table below. */
export type SignatureSyntax = 't-v1' | 'v1-list' | 'plain';

/**
 * Every signature syntax by its name. A new syntax is one file exporting a SyntaxSpec, its name above and one
 * line here: the config check, the profile, its messages and the diagnostics read this table.
 */
export const syntaxes = {
  't-v1': timestampedSyntax,
  'v1-list': versionedListSyntax,
  plain: plainSyntax,
} as const satisfies Record<SignatureSyntax, SyntaxSpec>;

export const syntaxNames = Object.keys(syntaxes) as SignatureSyntax[];
