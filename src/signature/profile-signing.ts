import { type Bytes, type SignedPiece, toBytes, utf8Text } from '../base/bytes.js';
import { WebhookConfigError } from '../base/errors.js';
import { type BodyShapeProblem, type MemberSpan, topLevelMembers, withMemberLast } from './json-members.js';
import { type BodyField, needsBody, type SignedDelivery } from './profile.js';
import type { ResolvedConfig } from './profile-config.js';
import { bodyTimestamp, syntaxes } from './reading.js';

// A profile's signing side: what a signer signs and how it lays the signature out. Made once with the profile.

/** What a signer needs of a profile: the reading to sign, and how to lay the signature out for sending. */
export type PrepareSigning = (input: {
  body: SignedPiece;
  timestamp: number | undefined;
  id: string | undefined;
}) => {
  reading: { timestampText: string; id: string | undefined; body: SignedPiece };
  timestamp: number;
  deliver(signature: string): SignedDelivery;
};

/** What a signer needs: the reading to sign, and the syntax's layout of the signature for sending. */
export function makeSigning(config: ResolvedConfig, bodyField: BodyField): PrepareSigning {
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
