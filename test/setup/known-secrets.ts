import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const SOURCE_DIRS = ['test', 'bench', 'examples'];
const SOURCE_FILE = /\.(ts|mts|mjs|js|json)$/;
const WHSEC = /['"`](whsec_[A-Za-z0-9_+/=-]{6,})['"`]/g;
const ASSIGNED = /\b\w*secret\w*['"]?\s*[:=]\s*\[?\s*['"`]([^'"`\s$]{8,})['"`]/gi;
/** `secrets: ['a', 'b']`, `{ live: […] }` lists: every literal inside the brackets. */
const ASSIGNED_LIST = /\b\w*secrets\w*['"]?\s*[:=]\s*\[([^\]]*)\]/gi;
const LITERAL = /['"`]([^'"`\s$]{8,})['"`]/g;
/** Shorter literals named "secret" are too common as ordinary words in output to scan for. */
const MIN_LENGTH = 8;

/**
 * Every secret the test suite uses, so the log scan knows what must never appear: the signature
 * fixtures and any secret-looking literal in the test, bench and example sources
 * (`whsec_…`, or a string assigned to a name containing "secret"), so a new test file is covered without
 * registering its secrets here.
 */
export function collectKnownSecrets(root: string): string[] {
  const found = new Set<string>();
  for (const dir of SOURCE_DIRS) {
    for (const file of walk(join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      if (file.endsWith('.json')) addFixtureSecrets(found, JSON.parse(text));
      for (const pattern of [WHSEC, ASSIGNED]) {
        for (const match of text.matchAll(pattern)) found.add(match[1] as string);
      }
      for (const list of text.matchAll(ASSIGNED_LIST)) {
        for (const match of (list[1] as string).matchAll(LITERAL)) found.add(match[1] as string);
      }
    }
  }
  return [...found].filter((secret) => secret.length >= MIN_LENGTH);
}

/** `secret`, `secrets` (strings) and `secrets_hex` (key bytes) anywhere in a fixture. */
function addFixtureSecrets(found: Set<string>, value: unknown, key = ''): void {
  if (typeof value === 'string') {
    if (/^secrets?$/i.test(key)) found.add(value);
    if (/_hex$/i.test(key) && /secret/i.test(key)) {
      found.add(value);
      const text = Buffer.from(value, 'hex').toString('utf8');
      if (/^[\x20-\x7e]+$/.test(text)) found.add(text);
    }
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) addFixtureSecrets(found, item, key);
    return;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [name, item] of Object.entries(value)) addFixtureSecrets(found, item, name);
  }
}

function* walk(dir: string): Generator<string> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else if (SOURCE_FILE.test(name)) yield path;
  }
}

/** Which secrets occur in `text`; the report names the secret by its first characters only. */
export function findLeakedSecrets(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((secret) => text.includes(secret));
}

export function redactedName(secret: string): string {
  return `${secret.slice(0, 6)}… (${secret.length} characters)`;
}
