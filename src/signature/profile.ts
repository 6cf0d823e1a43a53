import { type Bytes, type SignedPiece, toBytes, utf8Text } from '../base/bytes.js';
import { WebhookConfigError } from '../base/errors.js';
import type { SignatureFailureReason } from '../contract/reasons.js';
import { getHeader, type HeaderSource } from '../contract/request.js';
import type { DigestEncoding, HashName } from '../crypto/provider.js';
import {
  type BodyShapeProblem,
  hasNestedMember,
  type MemberSpan,
  topLevelMembers,
  withMemberLast,
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
  type TimestampOffset,
} from './profile-text.js';
import {
  bodyTimestamp,
  failed,
  isDigits,
  readBodySignature,
  type SignatureReading,
  syntaxes,
  withReadingFields,
} from './reading.js';
import type { SecretFormat } from './secrets.js';

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
   * repeated member…). Given `offset`, a timestamp out of tolerance says by how much and what the tolerance is.
   * Never a secret, a signature or the body.
   */
  explain(
    reason: SignatureFailureReason,
    request?: { headers: HeaderSource; body: SignedPiece },
    offset?: TimestampOffset,
  ): string;
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

export type { TimestampOffset } from './profile-text.js';
export type { SignatureProblem, SignatureReading } from './reading.js';

type Fill = (reading: { timestampText: string | undefined; id: string | undefined }) => string;
type BodyField = { bodyField: string } | undefined;

/** `options` names, in messages, what a user sets to change each part (default: the createProfile config paths). */
export function buildProfile(
  config: ResolvedConfig,
  options: OptionNames = createProfileOptions(config),
): SignatureProfile {
  const { signature, timestamp: timestampSource, id: idSource } = config;
  const signatureHeader = 'header' in signature ? signature.header : undefined;
  const headers = [signatureHeader, timestampHeader(timestampSource), idSource?.header].filter(
    (name): name is string => name !== undefined,
  );
  const bodyField = 'bodyField' in signature ? signature : undefined;
  const read = makeReader(config, bodyField);
  const text = describeProfile(config, options);
  const explain: SignatureProfile['explain'] = (reason, request, offset) => {
    if (!request || (reason !== 'missing_signature' && reason !== 'malformed_signature'))
      return text.message(reason, undefined, offset);
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
    signedContent: makeSignedContent(config),
    prepareSigning: makeSigning(config, bodyField),
  };
}

function needsBody(config: ResolvedConfig, bodyField: BodyField): boolean {
  const source = config.timestamp;
  return bodyField !== undefined || (typeof source === 'object' && 'bodyField' in source);
}

/** The profile's one parser: the syntax's scan of the header or member, then the timestamp and id. */
function makeReader(config: ResolvedConfig, bodyField: BodyField): SignatureProfile['read'] {
  const { signature, timestamp: timestampSource, id: idSource } = config;
  const scan = syntaxes[signature.syntax].scan;
  const withBody = needsBody(config, bodyField);
  return (headers, body) => {
    let bytes: Bytes | undefined;
    let members: MemberSpan[] | BodyShapeProblem | undefined;
    if (withBody) {
      bytes = toBytes(body);
      members = topLevelMembers(bytes);
    }
    const reading = bodyField
      ? readBodySignature(bytes as Bytes, members, bodyField.bodyField, scan)
      : withReadingFields(scan(getHeader(headers, (signature as { header: string }).header)), body);
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
}

function makeSignedContent(config: ResolvedConfig): SignatureProfile['signedContent'] {
  const before = compile(config.template.before);
  const after = compile(config.template.after);
  return (reading) => {
    const head = before(reading);
    const tail = after(reading);
    if (tail) return head ? [head, reading.body, tail] : [reading.body, tail];
    return head ? [head, reading.body] : [reading.body];
  };
}

/** What a signer needs: the reading to sign, and the syntax's layout of the signature for sending. */
function makeSigning(config: ResolvedConfig, bodyField: BodyField): SignatureProfile['prepareSigning'] {
  const { timestamp: timestampSource, id: idSource } = config;
  const format = syntaxes[config.signature.syntax].format;
  const withBody = needsBody(config, bodyField);
  return ({ body, timestamp, id }) => {
    if (idSource && !id)
      throw new WebhookConfigError(`Signature profile '${config.name}' signs a message id: give id.`);
    const bytes = withBody ? toBytes(body) : undefined;
    const members = bytes ? topLevelMembers(bytes) : undefined;
    const seconds = signingSeconds(config, bytes, members, timestamp);
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
    return {
      reading: { timestampText, id, body },
      timestamp: seconds,
      deliver(encoded) {
        const out: Record<string, string> = {};
        if (idSource) out[idSource.header] = id as string;
        if (typeof timestampSource === 'object' && 'header' in timestampSource)
          out[timestampSource.header] = timestampText;
        const value = format(timestampText, encoded);
        if (!bodyField) {
          out[(config.signature as { header: string }).header] = value;
          return { headers: out, body };
        }
        const member = `${JSON.stringify(bodyField.bodyField)}:${JSON.stringify(value)}`;
        const sent = withMemberLast(bytes as Bytes, members as MemberSpan[], member);
        return { headers: out, body: typeof body === 'string' ? utf8Text(sent) : sent };
      },
    };
  };
}

/** The timestamp a signer signs with: the given one, or the body's own when the profile reads it there. */
function signingSeconds(
  config: ResolvedConfig,
  bytes: Bytes | undefined,
  members: MemberSpan[] | BodyShapeProblem | undefined,
  timestamp: number | undefined,
): number {
  const source = config.timestamp;
  if (typeof source === 'object' && 'bodyField' in source) {
    const fromBody = bodyTimestamp(bytes as Bytes, members, source.bodyField);
    if (fromBody === undefined || (timestamp !== undefined && timestamp !== fromBody)) {
      throw new WebhookConfigError(
        `Signature profile '${config.name}' takes the timestamp from the body's "${source.bodyField}" (ISO 8601 or unix seconds): set it there${timestamp === undefined ? '' : ' to the timestamp you sign with'}.`,
      );
    }
    return fromBody;
  }
  if (timestamp === undefined) throw new WebhookConfigError('A timestamp (unix seconds) is needed to sign.');
  return timestamp;
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
