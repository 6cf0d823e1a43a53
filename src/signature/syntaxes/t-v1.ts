import { emptyScan, isWhitespace, type SignatureScan, type SyntaxSpec } from './scan.js';

/**
 * `t=<unix seconds>,v1=<signature>[,v1=…]`. Items split on `,`, each on its first `=`, whitespace around
 * items ignored, unknown versions ignored. Valid with exactly one `t` of digits only and at least one `v1`.
 */
export const timestampedSyntax: SyntaxSpec = {
  scan: scanTimestamped,
  format: (timestampText, encoded) => `t=${timestampText},v1=${encoded}`,
  shape: (digest) => `t=<unix seconds>,v1=${digest}`,
  rule: 'it needs exactly one t (digits only) and at least one v1',
  carriesTimestamp: true,
};

/**
 * It runs on every delivery, so it scans by index instead of slicing and trimming each item: only the values
 * it returns become strings.
 */
export function scanTimestamped(header: string | null | undefined): SignatureScan {
  const scan = emptyScan();
  if (header === undefined || header === null) return scan;
  const length = header.length;
  let blank = true;
  let start = 0;
  while (start <= length) {
    let end = header.indexOf(',', start);
    if (end === -1) end = length;
    let first = start;
    let last = end;
    while (first < last && isWhitespace(header.charCodeAt(first))) first++;
    while (last > first && isWhitespace(header.charCodeAt(last - 1))) last--;
    start = end + 1;
    if (first === last) continue;
    blank = false;
    const eq = header.indexOf('=', first);
    if (eq === -1 || eq >= last) continue;
    const keyLength = eq - first;
    if (keyLength === 1 && header.charCodeAt(first) === 116 /* t */) {
      if (scan.timestamps++ === 0) scan.timestampText = header.slice(eq + 1, last);
    } else if (
      keyLength === 2 &&
      header.charCodeAt(first) === 118 /* v */ &&
      header.charCodeAt(first + 1) === 49
    ) {
      scan.signatures.push(header.slice(eq + 1, last));
    }
  }
  // A header of separators and whitespace only (`,`) is still a header: malformed, not missing.
  scan.present = !blank || header.trim() !== '';
  return scan;
}
