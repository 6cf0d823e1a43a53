import { type Bytes, type SignedPiece, toBytes, utf8Text } from '../base/bytes.js';
import { WebhookConfigError } from '../base/errors.js';
import type { SignatureFailureReason } from '../contract/reasons.js';
import { getHeader, type HeaderSource } from '../contract/request.js';
import type { DigestEncoding, HashName } from '../crypto/provider.js';
import { type HeaderScan, headerScanners, isDigits } from './header-syntax.js';
import {
  type BodyShapeProblem,
  hasNestedMember,
  type MemberSpan,
  scalarValue,
  stringValue,
  topLevelMembers,
  withMemberLast,
  withoutMember,
} from './json-members.js';
import {
  type ResolvedConfig,
  resolveConfig,
  type SignatureProfileConfig,
  type Slot,
} from './profile-config.js';
import {
  createProfileOptions,
  describeProfile,
  type OptionNames,
  type SignatureProblem,
} from './profile-text.js';
import type { SecretFormat } from './secrets.js';

/** What a request carries for its signature, read by the profile's one parser; the verifier checks the rest. */
export interface SignatureReading extends HeaderScan {
  /** Set when nothing can be verified: the reason to answer. */
  failure: 'missing_signature' | 'malformed_signature' | undefined;
  /** Unix seconds (NaN until read). */
  timestamp: number;
  id: string | undefined;
  /** What exactly is wrong when `failure` is set, when the reading can tell. */
  problem: SignatureProblem | undefined;
  /** The body as signed: the raw body, or for a body signature the body without its member. */
  body: SignedPiece;
}

/** What a signer sends: the headers (content-type aside) and the body, which a body signature changes. */
export interface SignedDelivery {
  headers: Record<string, string>;
  body: SignedPiece;
}

/** A signature format, made by createProfile (or a preset): the verifier, signers and diagnostics all use it. */
export interface SignatureProfile {
  readonly name: string;
  readonly hash: HashName;
  readonly encoding: DigestEncoding;
  readonly secretFormat: SecretFormat;
  /** The header the signature travels in; undefined when it travels in the body. */
  readonly signatureHeader: string | undefined;
  /** Every header the profile reads (lowercase). */
  readonly headers: readonly string[];
  /** The config it was made from, defaults filled in. */
  readonly config: Readonly<ResolvedConfig>;
  /** The format in one line, for example `webhook-signature: t=<unix seconds>,v1=<hex>`. */
  readonly format: string;
  /**
   * What a failure means under this profile and what to do: its header or body member, its syntax, the option
   * that names it. Given the request, a missing or malformed signature is pinpointed (a timestamp header, a
   * repeated member…). Never a secret, a signature or the body.
   */
  explain(reason: SignatureFailureReason, request?: { headers: HeaderSource; body: SignedPiece }): string;
  /** Reads the request's signature parts. Never throws. */
  read(headers: HeaderSource, body: SignedPiece): SignatureReading;
  /** The signed content, as pieces fed to the HMAC in order (the body is never copied). */
  signedContent(reading: {
    timestampText: string | undefined;
    id: string | undefined;
    body: SignedPiece;
  }): readonly SignedPiece[];
  /** The parts a signer needs: what to sign, and how to lay the signature out for sending. */
  prepareSigning(input: { body: SignedPiece; timestamp: number | undefined; id: string | undefined }): {
    reading: { timestampText: string; id: string | undefined; body: SignedPiece };
    timestamp: number;
    deliver(signature: string): SignedDelivery;
  };
}

/** Makes a profile from a config; a mistake throws a WebhookConfigError that says what to fix. */
export function createProfile(config: SignatureProfileConfig): SignatureProfile {
  return buildProfile(resolveConfig(config));
}

export type { SignatureProblem } from './profile-text.js';

type Fill = (reading: { timestampText: string | undefined; id: string | undefined }) => string;

/**
 * `custom` replaces the template: the older `scheme` option's signedContent function. `options` names, in
 * messages, what a user sets to change each part (default: the createProfile config paths).
 */
export function buildProfile(
  config: ResolvedConfig,
  custom?: (timestamp: string, body: SignedPiece) => readonly SignedPiece[],
  options: OptionNames = createProfileOptions(config),
): SignatureProfile {
  const { signature, timestamp: timestampSource, id: idSource } = config;
  const signatureHeader = 'header' in signature ? signature.header : undefined;
  const headers = [signatureHeader, timestampHeader(timestampSource), idSource?.header].filter(
    (name): name is string => name !== undefined,
  );
  const before = compile(config.template.before);
  const after = compile(config.template.after);
  const scan = headerScanners[signature.syntax];
  const bodyField = 'bodyField' in signature ? signature : undefined;
  const format = (timestampText: string, encoded: string) =>
    signature.syntax === 't-v1'
      ? `t=${timestampText},v1=${encoded}`
      : signature.syntax === 'v1-list'
        ? `v1,${encoded}`
        : encoded;

  const needsBody =
    bodyField !== undefined || (typeof timestampSource === 'object' && 'bodyField' in timestampSource);

  const read = (headers: HeaderSource, body: SignedPiece): SignatureReading => {
    let bytes: Bytes | undefined;
    let members: MemberSpan[] | BodyShapeProblem | undefined;
    if (needsBody) {
      bytes = toBytes(body);
      members = topLevelMembers(bytes);
    }
    const reading = bodyField
      ? readBodySignature(bytes as Bytes, members, bodyField.bodyField, scan)
      : withReadingFields(scan(getHeader(headers, signatureHeader as string)), body);
    if (!reading.present) return failed(reading, 'missing_signature');
    if (reading.failure) return reading;
    if (reading.signatures.length === 0) return failed(reading, 'malformed_signature', 'signature_syntax');
    if (timestampSource === 'signature') {
      if (reading.timestamps !== 1 || !isDigits(reading.timestampText))
        return failed(reading, 'malformed_signature', 'signature_syntax');
      reading.timestamp = Number(reading.timestampText);
    } else if ('header' in timestampSource) {
      const value = getHeader(headers, timestampSource.header)?.trim();
      if (!isDigits(value)) return failed(reading, 'malformed_signature', 'timestamp_invalid');
      reading.timestamps = 1;
      reading.timestampText = value;
      reading.timestamp = Number(value);
    } else {
      const seconds = bodyTimestamp(bytes as Bytes, members, timestampSource.bodyField);
      if (seconds === undefined) return failed(reading, 'malformed_signature', 'timestamp_invalid');
      reading.timestamps = 1;
      reading.timestampText = String(seconds);
      reading.timestamp = seconds;
    }
    if (idSource) {
      reading.id = getHeader(headers, idSource.header)?.trim();
      if (!reading.id) return failed(reading, 'malformed_signature', 'id_missing');
    }
    return reading;
  };

  const signedContent: SignatureProfile['signedContent'] = (reading) => {
    if (custom) return custom(reading.timestampText as string, reading.body);
    const head = before(reading);
    const tail = after(reading);
    if (tail) return head ? [head, reading.body, tail] : [reading.body, tail];
    return head ? [head, reading.body] : [reading.body];
  };

  const prepareSigning: SignatureProfile['prepareSigning'] = ({ body, timestamp, id }) => {
    if (idSource && !id)
      throw new WebhookConfigError(`Signature profile '${config.name}' signs a message id: give id.`);
    const bytes = needsBody ? toBytes(body) : undefined;
    const members = bytes ? topLevelMembers(bytes) : undefined;
    let seconds = timestamp;
    if (typeof timestampSource === 'object' && 'bodyField' in timestampSource) {
      const fromBody = bodyTimestamp(bytes as Bytes, members, timestampSource.bodyField);
      if (fromBody === undefined || (timestamp !== undefined && timestamp !== fromBody)) {
        throw new WebhookConfigError(
          `Signature profile '${config.name}' takes the timestamp from the body's "${timestampSource.bodyField}" (ISO 8601 or unix seconds): set it there${timestamp === undefined ? '' : ' to the timestamp you sign with'}.`,
        );
      }
      seconds = fromBody;
    }
    if (seconds === undefined) throw new WebhookConfigError('A timestamp (unix seconds) is needed to sign.');
    const timestampText = String(seconds);
    if (
      bodyField &&
      (typeof members !== 'object' || members.some((member) => member.name === bodyField.bodyField))
    ) {
      throw new WebhookConfigError(
        `Signature profile '${config.name}' signs a JSON object body without a top-level "${bodyField.bodyField}" member: the signer adds it.`,
      );
    }
    // The payload is signed as given; the member goes after the last one, so the verifier's cut gives it back.
    const signedBody = body;
    return {
      reading: { timestampText, id, body: signedBody },
      timestamp: seconds,
      deliver(encoded) {
        const out: Record<string, string> = {};
        if (idSource) out[idSource.header] = id as string;
        if (typeof timestampSource === 'object' && 'header' in timestampSource)
          out[timestampSource.header] = timestampText;
        if (!bodyField) {
          out[signatureHeader as string] = format(timestampText, encoded);
          return { headers: out, body };
        }
        const member = `${JSON.stringify(bodyField.bodyField)}:${JSON.stringify(format(timestampText, encoded))}`;
        const sent = withMemberLast(bytes as Bytes, members as MemberSpan[], member);
        return { headers: out, body: typeof body === 'string' ? utf8Text(sent) : sent };
      },
    };
  };

  const text = describeProfile(config, options, custom !== undefined);
  const explain: SignatureProfile['explain'] = (reason, request) => {
    if (!request || (reason !== 'missing_signature' && reason !== 'malformed_signature'))
      return text.message(reason);
    const problem = read(request.headers, request.body).problem;
    if (problem === undefined && bodyField && hasNestedMember(toBytes(request.body), bodyField.bodyField))
      return text.message(reason, 'member_nested');
    return text.message(reason, problem);
  };

  return {
    name: config.name,
    hash: config.hash,
    encoding: config.encoding,
    secretFormat: config.secretFormat,
    signatureHeader,
    headers,
    config,
    format: text.format,
    explain,
    read,
    signedContent,
    prepareSigning,
  };
}

/** Completes a scan into a reading in place (the scan has room for these fields): one object per request. */
function withReadingFields(scan: HeaderScan, body: SignedPiece): SignatureReading {
  const reading = scan as SignatureReading;
  reading.failure = undefined;
  reading.timestamp = Number.NaN;
  reading.id = undefined;
  reading.problem = undefined;
  reading.body = body;
  return reading;
}

function failed(
  reading: SignatureReading,
  reason: 'missing_signature' | 'malformed_signature',
  problem?: SignatureProblem,
): SignatureReading {
  reading.failure = reason;
  reading.problem = problem;
  return reading;
}

function timestampHeader(source: ResolvedConfig['timestamp']): string | undefined {
  return typeof source === 'object' && 'header' in source ? source.header : undefined;
}

function compile(parts: readonly (string | Slot)[]): Fill {
  if (parts.length === 0) return () => '';
  // The default shape, `{timestamp}.`, as one concatenation.
  const [first, second] = parts;
  if (
    parts.length === 2 &&
    typeof first === 'object' &&
    first.slot === 'timestamp' &&
    typeof second === 'string'
  ) {
    return (reading) => reading.timestampText + second;
  }
  return (reading) => {
    let out = '';
    for (const part of parts) {
      out += typeof part === 'string' ? part : part.slot === 'timestamp' ? reading.timestampText : reading.id;
    }
    return out;
  };
}

/**
 * The one top-level signature member, and the body without it (cut from the bytes, see withoutMember). A
 * body that cannot carry the member, or carries it twice or not as a string, is malformed: never guessed at.
 */
function readBodySignature(
  bytes: Bytes,
  members: MemberSpan[] | BodyShapeProblem | undefined,
  field: string,
  scan: (value: string | undefined) => HeaderScan,
): SignatureReading {
  if (typeof members !== 'object') {
    const reading = withPresence(withReadingFields(scan(undefined), bytes));
    return failed(reading, 'malformed_signature', members);
  }
  const found = members.filter((member) => member.name === field);
  const value = found.length === 1 ? stringValue(bytes, found[0] as MemberSpan) : undefined;
  const reading = withReadingFields(scan(value), bytes);
  if (found.length === 0) return reading;
  if (found.length > 1) return failed(withPresence(reading), 'malformed_signature', 'member_repeated');
  if (value === undefined) return failed(withPresence(reading), 'malformed_signature', 'member_not_string');
  reading.body = withoutMember(bytes, members, members.indexOf(found[0] as MemberSpan));
  return reading;
}

/** A member that is there but unreadable (duplicated, not a string) is present: malformed, not missing. */
function withPresence(reading: SignatureReading): SignatureReading {
  reading.present = true;
  return reading;
}

/** Unix seconds from a body field: a whole number, or ISO 8601 text with an offset. */
function bodyTimestamp(
  bytes: Bytes,
  members: MemberSpan[] | BodyShapeProblem | undefined,
  field: string,
): number | undefined {
  if (typeof members !== 'object') return undefined;
  const found = members.filter((member) => member.name === field);
  if (found.length !== 1) return undefined;
  const value = scalarValue(bytes, found[0] as MemberSpan);
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (value === undefined) return undefined;
  if (isDigits(value)) return Number(value);
  // An offset is required: a local time would mean something else on every server.
  if (!/(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}
