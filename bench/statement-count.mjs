// Statements per delivery, counted on the client: every statement the drivers are asked to send (pg, mysql2,
// mariadb), BEGIN and COMMIT included, so that a store and its hand route can be compared statement for statement.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let counting = false;
let count = 0;

function wrap(prototype, names) {
  for (const name of names) {
    const original = prototype[name];
    prototype[name] = function counted(...args) {
      if (counting) count++;
      return original.apply(this, args);
    };
  }
}

wrap(require('pg').Client.prototype, ['query']);
wrap(require('mysql2').Connection.prototype, ['query', 'execute']);
wrap(require('mariadb/lib/connection-promise.js').prototype, ['query', 'execute']);

/** How many statements `work` sent (nothing else may run meanwhile). */
export async function statementsOf(work) {
  count = 0;
  counting = true;
  try {
    await work();
  } finally {
    counting = false;
  }
  return count;
}
