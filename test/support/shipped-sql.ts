import { readFile } from 'node:fs/promises';

/** The statements of a file the package ships in sql/, its comment lines left out. */
export async function shippedStatements(file: string): Promise<string> {
  const shipped = await readFile(new URL(`../../sql/${file}`, import.meta.url), 'utf8');
  return shipped
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n');
}
