// The Node 24 and 26 binaries are devDependencies (CI runs the suite on each by path), and npm links their
// `node` into node_modules/.bin, which npm puts first on PATH: `npm test` would then run on Node 24 whatever the
// machine's Node is, and the engines floor would never be tested. It is the `dependencies` script: npm runs it
// after `npm ci` and every `npm install` that changed node_modules, in this repository only. Not `prepare`: npm
// counts that as an install script of the package when an app installs the tarball, and warns about it.
import { lstatSync, readlinkSync, unlinkSync } from 'node:fs';

const link = new URL('../node_modules/.bin/node', import.meta.url);
try {
  if (lstatSync(link).isSymbolicLink() && /node2\d/.test(readlinkSync(link))) unlinkSync(link);
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
