import { emptyScan, type SignatureScan, type SyntaxSpec } from './scan.js';

/** The whole value is one signature; the timestamp travels elsewhere. */
export const plainSyntax: SyntaxSpec = {
  scan: scanPlain,
  format: (_timestampText, encoded) => encoded,
  shape: (digest) => digest,
  rule: 'the whole value is the signature',
  carriesTimestamp: false,
};

function scanPlain(header: string | null | undefined): SignatureScan {
  const scan = emptyScan();
  const value = header?.trim() ?? '';
  scan.present = value !== '';
  if (scan.present) scan.signatures.push(value);
  return scan;
}
