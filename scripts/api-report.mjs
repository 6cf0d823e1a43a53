// Writes one API report per package entry (api/<entry>.api.md) from the built .d.ts files; with --check it
// changes nothing and fails when a report no longer matches the build, so a change to the public surface is
// always a reviewed diff. The entries come from package.json "exports", the one list of them.
// Either way it fails on any warning of api-extractor, and on a type a public signature names that no entry
// exports (a user could not name what they are given). A type named by one entry and exported by another is
// fine: each name is exported from one entry only; the types of the root entry's signatures are exported from the
// root entry itself.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  ExtractorMessageCategory,
} from '@microsoft/api-extractor';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const packageJsonFullPath = path.join(root, 'package.json');
const check = process.argv.includes('--check');
const reportFolder = path.join(root, 'api');
const tempFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'api-report-'));

/** `.` is the root entry; `./redis` becomes `redis`. */
export function reportName(entry) {
  return entry === '.' ? 'root' : entry.slice(2);
}

function entries() {
  const { exports } = JSON.parse(fs.readFileSync(packageJsonFullPath, 'utf8'));
  return Object.entries(exports)
    .filter(([, target]) => typeof target === 'object')
    .map(([entry, target]) => ({ entry, name: reportName(entry), types: path.join(root, target.types) }));
}

/** Every name (type or value) some entry exports, as the compiler reads the built .d.ts files. */
function exportedNames(all) {
  const program = ts.createProgram(
    all.map((entry) => entry.types),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  const names = new Set();
  for (const entry of all) {
    const file = program.getSourceFile(entry.types);
    const module = file && checker.getSymbolAtLocation(file);
    if (!module) throw new Error(`${entry.entry}: ${entry.types} is missing; run \`npm run build\` first.`);
    for (const exported of checker.getExportsOfModule(module)) names.add(exported.name);
  }
  return names;
}

function configFor({ name, types }) {
  return ExtractorConfig.prepare({
    configObjectFullPath: path.join(root, 'api', `${name}.json`),
    packageJsonFullPath,
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: types,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2022',
            skipLibCheck: true,
          },
          files: [types],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: `${name}.api.md`,
        reportFolder,
        reportTempFolder: tempFolder,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        // Every message reaches the callback below, which fails the run on it (a forgotten export only when no
        // entry exports the type).
        extractorMessageReporting: {
          default: { logLevel: 'warning', addToApiReportFile: false },
          // The package has one release level, so the @public/@beta tags api-extractor asks for would say nothing.
          'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          // Line numbers of undocumented members would make every moved line of a .d.ts a change to review.
          'ae-undocumented': { logLevel: 'none', addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
  });
}

fs.mkdirSync(reportFolder, { recursive: true });
const all = entries();
const exported = exportedNames(all);
const stale = [];
const problems = [];
for (const entry of all) {
  const result = Extractor.invoke(configFor(entry), {
    localBuild: !check,
    messageCallback: (message) => {
      message.handled = true;
      const problem = describe(message, entry);
      if (problem) problems.push(problem);
      // Only a problem counts against the run; a type exported by another entry does not.
      else if (message.category !== ExtractorMessageCategory.Console) {
        message.logLevel = ExtractorLogLevel.None;
      }
    },
  });
  if (!result.succeeded || (check && result.apiReportChanged)) stale.push(entry.name);
}
fs.rmSync(tempFolder, { recursive: true, force: true });
if (problems.length > 0) {
  console.error(
    `The public surface has ${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join('\n')}`,
  );
}
if (stale.length > 0) {
  console.error(
    `API reports out of date: ${stale.join(', ')}. Run \`npm run api\` and review the diff in api/.`,
  );
}
if (problems.length > 0 || stale.length > 0) process.exit(1);
console.log(
  check ? 'API reports match the build.' : `API reports written to ${path.relative(root, reportFolder)}/.`,
);

/** What is wrong in a message of api-extractor, or undefined when nothing is. */
function describe(message, entry) {
  const where = `${packageName(entry.entry)} (api/${entry.name}.api.md)`;
  if (message.messageId === 'ae-forgotten-export') {
    const name = /The symbol "([^"]+)"/.exec(message.text)?.[1] ?? message.text;
    if (exported.has(name)) return undefined;
    return (
      `${name}: a public signature of ${where} names it, and no entry exports it. Export it ` +
      `(\`export type\`) from the entry whose functions name it (the root entry for a type an application ` +
      'names; messaging-webhooks/adapter or /extend for one only an extension needs).'
    );
  }
  // The extractor's own progress lines (report written, report changed) are not about the surface.
  if (message.category === ExtractorMessageCategory.Console) return undefined;
  if (message.logLevel !== ExtractorLogLevel.Warning && message.logLevel !== ExtractorLogLevel.Error) {
    return undefined;
  }
  const line = message.sourceFilePath
    ? ` at ${path.relative(root, message.sourceFilePath)}:${message.sourceFileLine}`
    : '';
  return `${message.messageId} in ${where}${line}: ${message.text}`;
}

function packageName(entry) {
  return entry === '.' ? 'messaging-webhooks' : `messaging-webhooks/${entry.slice(2)}`;
}
