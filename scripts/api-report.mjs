// Writes one API report per package entry (api/<entry>.api.md) from the built .d.ts files; with --check it
// changes nothing and fails when a report no longer matches the build, so a change to the public surface is
// always a reviewed diff. The entries come from package.json "exports", the one list of them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

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
    .map(([entry, target]) => ({ name: reportName(entry), types: path.join(root, target.types) }));
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
        // Written into the report instead: a type a public signature names but no entry exports shows there.
        extractorMessageReporting: {
          default: { logLevel: 'none', addToApiReportFile: true },
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
const stale = [];
for (const entry of entries()) {
  const result = Extractor.invoke(configFor(entry), {
    localBuild: !check,
    messageCallback: quietUnlessError,
  });
  if (!result.succeeded || (check && result.apiReportChanged)) stale.push(entry.name);
}
fs.rmSync(tempFolder, { recursive: true, force: true });
if (stale.length > 0) {
  console.error(
    `API reports out of date: ${stale.join(', ')}. Run \`npm run api\` and review the diff in api/.`,
  );
  process.exit(1);
}
console.log(
  check ? 'API reports match the build.' : `API reports written to ${path.relative(root, reportFolder)}/.`,
);

function quietUnlessError(message) {
  if (message.logLevel !== 'error') message.handled = true;
}
