import { toBytes } from '../base/bytes.js';
import { hasNestedMember } from './json-members.js';
import { makeReader, makeSignedContent, type SignatureProfile } from './profile.js';
import { type ResolvedConfig, resolveConfig, type SignatureProfileConfig } from './profile-config.js';
import { makeSigning } from './profile-signing.js';
import { createProfileOptions, describeProfile, type OptionNames } from './profile-text.js';

// How a profile is made from its config: once, at creation. What runs per request is in profile.ts.

/** Makes a profile from a config; a mistake throws a WebhookConfigError that says what to fix. */
export function createProfile(config: SignatureProfileConfig): SignatureProfile {
  return buildProfile(resolveConfig(config));
}

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

function timestampHeader(source: ResolvedConfig['timestamp']): string | undefined {
  return typeof source === 'object' && 'header' in source ? source.header : undefined;
}
