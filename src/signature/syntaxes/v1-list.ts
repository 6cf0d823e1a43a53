import { emptyScan, type SignatureScan, type SyntaxSpec } from './scan.js';

/**
 * Standard Webhooks' `v1,<signature> v1,<signature>`: items split on spaces, each on its first `,`; items of
 * other versions ignored. The timestamp travels elsewhere.
 */
export const versionedListSyntax: SyntaxSpec = {
  scan: scanVersionedList,
  format: (_timestampText, encoded) => `v1,${encoded}`,
  shape: (digest) => `v1,${digest}[ v1,${digest}…]`,
  rule: 'it needs at least one v1,<signature> item, items separated by spaces',
  carriesTimestamp: false,
};

function scanVersionedList(header: string | null | undefined): SignatureScan {
  const scan = emptyScan();
  if (header === undefined || header === null || header.trim() === '') return scan;
  scan.present = true;
  let start = 0;
  while (start <= header.length) {
    let end = header.indexOf(' ', start);
    if (end === -1) end = header.length;
    if (header.startsWith('v1,', start) && end >= start + 3)
      scan.signatures.push(header.slice(start + 3, end));
    start = end + 1;
  }
  return scan;
}
