import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EdgeRuntime } from 'edge-runtime';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEvent, signPayload } from '../../src/testing.js';

/**
 * Runs the Fetch adapter and the core inside edge-runtime's restricted context (Vercel Edge conditions):
 * no `process`, no node:crypto, and code generation from strings (`eval`, `new Function`) disabled.
 *
 * edge-runtime evaluates scripts, not ES modules, so this test links the module graph itself, as a bundler
 * would: each file (our TypeScript and zod's ESM) is transpiled to CommonJS by TypeScript, compiled
 * by the host into a function of the edge realm, and required by a loader that runs inside the edge realm.
 * Packages resolve with the conditions an edge bundler uses; a `node:` import anywhere in the graph fails it.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CONDITIONS = ['edge-light', 'worker', 'browser', 'import', 'default'];
const nodeBuiltins = new Set(builtinModules);

function resolveModule(specifier: string, from: string): string {
  if (specifier.startsWith('node:') || nodeBuiltins.has(specifier)) {
    throw new Error(`${from} imports ${specifier}, which does not exist in an edge runtime.`);
  }
  if (specifier.startsWith('.')) {
    const path = resolve(dirname(from), specifier);
    const typescript = path.replace(/\.js$/, '.ts');
    if (existsSync(typescript)) return typescript;
    if (existsSync(path)) return path;
    throw new Error(`Cannot resolve ${specifier} from ${from}`);
  }
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
  const subpath = `.${specifier.slice(name.length)}`;
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const packageDir = join(dir, 'node_modules', name);
    if (existsSync(join(packageDir, 'package.json'))) return packageEntry(packageDir, subpath);
    if (dir === dirname(dir)) throw new Error(`Cannot find package ${name} from ${from}`);
  }
}

function packageEntry(packageDir: string, subpath: string): string {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const exports = manifest.exports;
  const target =
    exports === undefined
      ? subpath === '.'
        ? (manifest.module ?? manifest.main ?? 'index.js')
        : subpath
      : pickCondition(
          typeof exports === 'string' || subpath === '.' ? (exports['.'] ?? exports) : exports[subpath],
        );
  if (typeof target !== 'string') throw new Error(`No edge entry for ${subpath} in ${packageDir}`);
  return join(packageDir, target);
}

function pickCondition(entry: unknown): unknown {
  if (typeof entry === 'string' || entry === null || typeof entry !== 'object') return entry;
  for (const condition of CONDITIONS) {
    if (condition in entry) return pickCondition((entry as Record<string, unknown>)[condition]);
  }
  return undefined;
}

function transpile(path: string): string {
  return ts.transpileModule(readFileSync(path, 'utf8'), {
    // As .js: TypeScript leaves a .mjs file's imports alone (it is an ES module by its name).
    fileName: path.replace(/\.mjs$/, '.js'),
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      verbatimModuleSyntax: false,
    },
  }).outputText;
}

/** A CommonJS loader living in the edge realm; only compiling source text is left to the host. */
const LOADER = `(function (resolveModule, compile) {
  const cache = new Map();
  return function load(id) {
    const cached = cache.get(id);
    if (cached) return cached.exports;
    const module = { exports: {} };
    cache.set(id, module);
    compile(id)(module.exports, (specifier) => load(resolveModule(specifier, id)), module);
    return module.exports;
  };
})`;

interface EdgeRun {
  env: { process: string; newFunction: string; zodAllowsEval: boolean; webCryptoSigns: number };
  valid: { status: number; body: string };
  tampered: { status: number; body: string };
  invalid: { status: number; body: string };
  handled: string[];
}

/** Runs inside the edge realm: receiver + Fetch adapter, three deliveries, and what the runtime allowed. */
const SCENARIO = `(async function (load, paths, input) {
  let webCryptoSigns = 0;
  const sign = crypto.subtle.sign.bind(crypto.subtle);
  crypto.subtle.sign = (...args) => { webCryptoSigns++; return sign(...args); };
  const { createReceiver } = load(paths.core);
  const { createFetchHandler } = load(paths.fetch);
  const { util } = load(paths.zodCore);
  const handled = [];
  const receiver = createReceiver({ secrets: input.secret });
  receiver.on('message.delivered', (event) => { handled.push(event.data.message_id); });
  const handler = createFetchHandler(receiver);
  const deliver = async (body, signature) => {
    const response = await handler(new Request('https://edge.example/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-signature': signature },
      body,
    }));
    return { status: response.status, body: await response.text() };
  };
  const valid = await deliver(input.body, input.signature);
  const tampered = await deliver(input.tampered, input.signature);
  const invalid = await deliver(input.invalidBody, input.invalidSignature);
  let newFunction = 'allowed';
  try { new Function(''); } catch (error) { newFunction = error.name; }
  const env = { process: typeof process, newFunction, zodAllowsEval: util.allowsEval.value, webCryptoSigns };
  return { env, valid, tampered, invalid, handled };
})`;

describe('fetch adapter inside edge-runtime (no node:crypto, no process, no eval)', () => {
  let run: EdgeRun;
  const event = createEvent('message.delivered', { data: { operator: 'edge 😀' } });
  const body = JSON.stringify(event);

  beforeAll(async () => {
    const runtime = new EdgeRuntime();
    const compiled = new Map<string, unknown>();
    const compile = (id: string) => {
      let fn = compiled.get(id);
      if (!fn) {
        fn = runtime.evaluate(`(function (exports, require, module) {\n${transpile(id)}\n})`);
        compiled.set(id, fn);
      }
      return fn;
    };
    const load = runtime.evaluate(LOADER)(resolveModule, compile);
    const invalidBody = JSON.stringify(createEvent('message.delivered', { data: { to: 'nobody' } }));
    const timestamp = Math.floor(Date.now() / 1000);
    const input = {
      secret: 'whsec_edge_secret',
      body,
      signature: signPayload({ payload: body, secret: 'whsec_edge_secret', timestamp }),
      tampered: body.replace(event.data.message_id, 'msg_tampered'),
      invalidBody,
      invalidSignature: signPayload({ payload: invalidBody, secret: 'whsec_edge_secret', timestamp }),
    };
    const paths = {
      core: join(root, 'src/index.ts'),
      fetch: join(root, 'adapters/fetch.ts'),
      zodCore: resolveModule('zod/v4/core', join(root, 'src/events/catalogue.ts')),
    };
    run = await runtime.evaluate(SCENARIO)(load, paths, input);
  });

  it('really is restricted: no process, new Function refused, zod without its JIT', () => {
    expect(run.env.process).toBe('undefined');
    expect(run.env.newFunction).toBe('EvalError');
    expect(run.env.zodAllowsEval).toBe(false);
  });

  it('answers a valid signed event 200 and runs the typed handler, verified with Web Crypto', () => {
    expect(run.valid).toEqual({ status: 200, body: '{"received":true}' });
    expect(run.handled).toEqual([event.data.message_id]);
    expect(run.env.webCryptoSigns).toBeGreaterThanOrEqual(1);
  });

  it('answers a tampered body 401 signature_mismatch', () => {
    expect(run.tampered.status).toBe(401);
    expect(JSON.parse(run.tampered.body).error.code).toBe('signature_mismatch');
  });

  it('validates events with zod jitless: a schema violation is 422 with its path', () => {
    expect(run.invalid.status).toBe(422);
    expect(JSON.parse(run.invalid.body).error.issues.map((issue: { path: string }) => issue.path)).toEqual([
      'data.to',
    ]);
  });
});
