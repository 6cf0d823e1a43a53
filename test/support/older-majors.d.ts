// The older framework majors the adapters are tested against, installed under aliases (express4, koa2):
// Express 4 keeps the API @types/express describes for everything the tests use.
declare module 'express4' {
  import express = require('express');
  export = express;
}
